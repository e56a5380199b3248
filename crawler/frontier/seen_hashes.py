"""The URLs a crawl has seen, once it has seen 100,000, in at most 16 bytes each.

Breadth-first order discovers a site's URLs long before it fetches them, so what
is kept per discovered URL is paid almost from the start: a Python ``set`` of int
hashes costs about 57 bytes a URL (an int object and its slot, the table at most
60 % full), and when it doubles, the old table and the new live at once — the
1.14 GB peak of a ten-million-page crawl.

Here each URL is its 64-bit hash (Python's own string hash, never 0) in an
open-addressing table of unsigned 64-bit words (:class:`array.array`, no object a
hash), split by the hash's top 8 bits into 256 shards. A shard grows alone, by
half (to 1.5 times its slots) once three quarters full: growing copies one shard
of 256, never the whole set, and after growing a shard is half full, so a URL
costs 8 to 16 bytes (about 12 on average). Lookups probe linearly from the slot
the hash's low bits name.

Exactness is a 64-bit hash's: two URLs of one crawl share one with odds of
n² ÷ 2^65, about 1 in 370,000 at ten million URLs (and then the second is taken
for the first, and not fetched).
"""

from __future__ import annotations

from array import array

SHARD_BITS = 8
_SHARDS = 1 << SHARD_BITS
_SHIFT = 64 - SHARD_BITS
_FIRST_SLOTS = 64  # a shard's first table: 512 bytes
_MAX_LOAD = 0.75
_GROWTH = 1.5
MASK64 = (1 << 64) - 1


def key_of(text: str) -> int:
    """A URL's 64-bit key: its string hash as unsigned, never 0 (0 marks an empty slot)."""
    return (hash(text) & MASK64) or 1


class SeenHashes:
    """A set of non-zero 64-bit keys: :meth:`add` says whether a key was new. With
    ``counting``, a count beside each key (:meth:`count`, :meth:`increment`), in 4
    bytes more: ``--max-query-variants``' paths, counted without their text."""

    def __init__(self, *, counting: bool = False) -> None:
        self._tables = [array("Q", [0]) * _FIRST_SLOTS for _ in range(_SHARDS)]
        self._values = ([array("I", [0]) * _FIRST_SLOTS for _ in range(_SHARDS)]
                        if counting else None)
        self._counts = [0] * _SHARDS
        self._limits = [int(_FIRST_SLOTS * _MAX_LOAD)] * _SHARDS
        self._size = 0

    def __len__(self) -> int:
        return self._size

    @property
    def nbytes(self) -> int:
        """The bytes its tables hold (their words; the arrays' headers aside)."""
        slots = sum(len(table) for table in self._tables)
        return slots * (8 if self._values is None else 12)

    def __contains__(self, key: int) -> bool:
        table = self._tables[key >> _SHIFT]
        return table[_slot(table, key)] == key

    def add(self, key: int) -> bool:
        """Keep ``key`` (non-zero, below 2^64); ``False`` if it was kept already."""
        table = self._tables[key >> _SHIFT]
        index = _slot(table, key)
        if table[index] == key:
            return False
        self._insert(key >> _SHIFT, index, key)
        return True

    def add_text(self, text: str) -> bool:
        """Keep the key of ``text`` (:func:`key_of`); ``False`` if it was kept already.

        Asked for every link of every page once the crawl keeps hashes alone: the
        key, the probe and the shard are written out here, not called (per link
        already seen, 0.66 µs through the frontier and :meth:`add`, 0.45 here, as
        much as a Python ``set`` of ints took)."""
        key = (hash(text) & MASK64) or 1
        shard = key >> _SHIFT
        table = self._tables[shard]
        slots = len(table)
        index = key % slots
        found = table[index]
        while found:
            if found == key:
                return False
            index += 1
            if index == slots:
                index = 0
            found = table[index]
        self._insert(shard, index, key)
        return True

    def count(self, key: int) -> int:
        """The count beside ``key`` (0 when it is not kept)."""
        assert self._values is not None, "a counting set"
        shard = key >> _SHIFT
        table = self._tables[shard]
        index = _slot(table, key)
        return self._values[shard][index] if table[index] == key else 0

    def increment(self, key: int) -> None:
        """One more of ``key`` (kept with a count of 1 the first time)."""
        assert self._values is not None, "a counting set"
        shard = key >> _SHIFT
        table = self._tables[shard]
        index = _slot(table, key)
        if table[index] == key:
            self._values[shard][index] += 1
        else:
            self._insert(shard, index, key)

    def _insert(self, shard: int, index: int, key: int) -> None:
        self._tables[shard][index] = key
        if self._values is not None:
            self._values[shard][index] = 1
        self._size += 1
        count = self._counts[shard] = self._counts[shard] + 1
        if count > self._limits[shard]:
            self._grow(shard)

    def _grow(self, shard: int) -> None:
        """One shard to 1.5 times its slots: the others are not touched."""
        old = self._tables[shard]
        slots = int(len(old) * _GROWTH) | 1  # odd: the low bits of keys all count
        table = array("Q", [0]) * slots
        if self._values is None:
            # each key moves twice on average as its shard grows by half: the probe is
            # written out (the keys are distinct: the first empty slot from its own)
            for key in old:
                if key:
                    index = key % slots
                    while table[index]:
                        index += 1
                        if index == slots:
                            index = 0
                    table[index] = key
        else:
            old_values = self._values[shard]
            values = array("I", [0]) * slots
            for key, value in zip(old, old_values, strict=True):
                if key:
                    index = _slot(table, key)
                    table[index], values[index] = key, value
            self._values[shard] = values
        self._tables[shard] = table
        self._limits[shard] = int(slots * _MAX_LOAD)


def _slot(table: array, key: int) -> int:
    """Where ``key`` is in ``table``, or the empty slot where it would go: probing on
    from the slot its value names (a table is never full)."""
    slots = len(table)
    index = key % slots
    while True:
        found = table[index]
        if found == key or not found:
            return index
        index += 1
        if index == slots:
            index = 0
