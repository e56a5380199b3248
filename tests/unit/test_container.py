"""The Dockerfile, read as text: the image installs every package the project has,
runs as a user other than root, and has the CLI as its entry point. (CI builds it
where a container engine is at hand; this holds everywhere.)"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def stage(name: str) -> list[str]:
    text = (ROOT / "Dockerfile").read_text()
    stages = re.split(r"^FROM ", text, flags=re.MULTILINE)[1:]
    found = next(part for part in stages if part.split()[2] == name)
    return [line.strip() for line in found.splitlines()[1:] if line.strip()
            and not line.lstrip().startswith("#")]


def test_the_image_holds_every_package_and_runs_as_a_plain_user() -> None:
    lines = stage("base")
    packages = tomllib.loads((ROOT / "pyproject.toml").read_text())[
        "tool"]["setuptools"]["packages"]["find"]["include"]
    copied = {line.split()[1] for line in lines if line.startswith("COPY")}
    for package in {name.split(".")[0] for name in packages}:
        assert package in copied, f"{package} is not copied into the image"
    assert "pyproject.toml" in copied
    assert [line for line in lines if line.startswith("USER")] == ["USER crawler"]
    assert 'ENTRYPOINT ["sitemap-crawler"]' in lines
    assert any("useradd" in line and "--uid 10001" in line for line in lines)


def test_the_render_target_brings_chromium_and_drops_root_again() -> None:
    lines = stage("render")
    assert any("apt-get install" in line and "chromium" in line for line in lines)
    assert any("pip install" in line and "render]" in line for line in lines)  # the extra
    assert [line for line in lines if line.startswith("USER")][-1] == "USER crawler"
    assert "ENV SITEMAP_CRAWLER_BROWSER=/usr/bin/chromium" in lines
