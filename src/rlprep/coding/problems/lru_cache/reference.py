"""An LRU cache on an OrderedDict (a hash map over a doubly linked list in recency order): O(1) get and put."""

from collections import OrderedDict


class LRUCache:
    """A least-recently-used cache of int keys and values, get and put in O(1)."""

    def __init__(self, capacity: int):
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1, got {capacity}")
        self.capacity = capacity
        self.items = OrderedDict()  # least recently used first

    def get(self, key: int) -> int:
        """The value of key, or -1 if absent; a hit makes key the most recently used."""
        if key not in self.items:
            return -1
        self.items.move_to_end(key)  # now the most recently used
        return self.items[key]

    def put(self, key: int, value: int) -> None:
        """Insert or update key; when over capacity, evict the least recently used key."""
        if key in self.items:
            self.items.move_to_end(key)
        self.items[key] = value
        if len(self.items) > self.capacity:
            self.items.popitem(last=False)  # evict the least recently used
