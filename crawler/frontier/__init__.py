"""Which URL is fetched next: the queue, the seen set, and the limits on both.

Breadth-first order, depth and page budgets, query-variant and trap guards, the
queue spilling to disk past a threshold, and the sketches of what lay outside
the scope. It decides order and admission only; nothing here fetches.
"""
