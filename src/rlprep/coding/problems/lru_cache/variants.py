"""Honest variants of LRUCache."""

from rlprep.coding.sources import Edit

VARIANTS = [
    Edit("linked_list", "the textbook answer: a dict of nodes in a doubly linked list with sentinels", source='''
        class _Node:
            __slots__ = ("key", "value", "prev", "next")

            def __init__(self, key=0, value=0):
                self.key, self.value, self.prev, self.next = key, value, None, None


        class LRUCache:
            def __init__(self, capacity):
                if capacity <= 0:
                    raise ValueError("capacity must be positive")
                self.capacity, self.nodes = capacity, {}
                self.head, self.tail = _Node(), _Node()  # head.next: most recent; tail.prev: least recent
                self.head.next, self.tail.prev = self.tail, self.head

            def _unlink(self, node):
                node.prev.next, node.next.prev = node.next, node.prev

            def _push_front(self, node):
                node.prev, node.next = self.head, self.head.next
                self.head.next.prev = node
                self.head.next = node

            def get(self, key):
                node = self.nodes.get(key)
                if node is None:
                    return -1
                self._unlink(node)
                self._push_front(node)
                return node.value

            def put(self, key, value):
                node = self.nodes.get(key)
                if node is not None:
                    node.value = value
                    self._unlink(node)
                    self._push_front(node)
                    return
                node = self.nodes[key] = _Node(key, value)
                self._push_front(node)
                if len(self.nodes) > self.capacity:
                    lru = self.tail.prev
                    self._unlink(lru)
                    del self.nodes[lru.key]
        '''),
    Edit("ordered_dict_by_reinsertion", "a plain dict keeps insertion order: pop and reinsert on every use", source='''
        class LRUCache:
            def __init__(self, capacity):
                if capacity < 1:
                    raise ValueError("capacity")
                self.capacity = capacity
                self.d = {}

            def get(self, key):
                if key not in self.d:
                    return -1
                self.d[key] = self.d.pop(key)
                return self.d[key]

            def put(self, key, value):
                self.d.pop(key, None)
                self.d[key] = value
                if len(self.d) > self.capacity:
                    del self.d[next(iter(self.d))]
        '''),
]
