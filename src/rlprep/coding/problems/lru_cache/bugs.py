"""Catalogued bugs of LRUCache."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("evicts_most_recent", "pops the most recently used entry",
         {"self.items.popitem(last=False)": "self.items.popitem(last=True)"}),
    Edit("get_does_not_refresh", "a hit does not count as a use",
         {"        self.items.move_to_end(key)  # now the most recently used\n": ""}),
    Edit("update_does_not_refresh", "updating a key leaves it where it was in the recency order",
         {"        if key in self.items:\n            self.items.move_to_end(key)\n": ""}),
    Edit("evicts_before_inserting", "evicts whenever the cache is full, even to update an existing key",
         {"        self.items[key] = value\n        if len(self.items) > self.capacity:\n            self.items.popitem(last=False)  # evict the least recently used":
          "        if len(self.items) >= self.capacity:\n            self.items.popitem(last=False)\n        self.items[key] = value"}),
    Edit("miss_returns_none", "returns None for a missing key",
         {"            return -1": "            return None"}),
    Edit("capacity_off_by_one", "keeps one entry too many",
         {"len(self.items) > self.capacity": "len(self.items) > self.capacity + 1"}),
]
