# Space of a size-class value heap under the issue-53 workload: values of 8 B to 4 KiB (mean about 128),
# every item rewritten with a new size each round; heap bytes (chunks held) / live value bytes.
# Run: python3 docs/lab/2026-11-29-format-3-heapsim.py 400000 (values; the plan's table). Not a benchmark of code: a model of the design.
import heapq, math, random, sys
from collections import defaultdict

def classes(ratio_log2_step):
    sizes, c = [], 0
    while True:
        s = int(math.ceil(32 * 2 ** (c * ratio_log2_step) / 16) * 16)
        if not sizes or s > sizes[-1]:
            sizes.append(s)
        if s >= 4096 + 8:
            return sizes
        c += 1

def run(sizes, chunk, n=100_000, rounds=10, seed=1, header=8):
    rnd = random.Random(seed)
    def size():
        while True:
            v = int(rnd.lognormvariate(math.log(80), 1.0))
            if 8 <= v <= 4096:
                return v
    def cls(v):
        for i, s in enumerate(sizes):
            if s >= v + header:
                return i
        raise ValueError(v)
    per_chunk = [max(1, chunk // s) for s in sizes]
    chunks = defaultdict(list)       # class -> list of [free set, used count]
    free_lists = defaultdict(set)    # class -> set of (chunk index, slot) free
    free_heaps = defaultdict(list)   # class -> heap of the same, lazily cleaned
    chunk_used = {}                  # (class, chunk id) -> used count
    next_chunk = [0]
    held = [0]
    def alloc(c):
        if not free_lists[c]:
            cid = next_chunk[0]; next_chunk[0] += 1
            held[0] += 1
            chunk_used[(c, cid)] = 0
            for s in range(per_chunk[c]):
                free_lists[c].add((cid, s))
                heapq.heappush(free_heaps[c], (cid, s))
        h = free_heaps[c]
        while h[0] not in free_lists[c]:
            heapq.heappop(h)
        blk = heapq.heappop(h)       # lowest address first: keeps chunks full
        free_lists[c].remove(blk)
        chunk_used[(c, blk[0])] += 1
        return (c, blk)
    def free(b):
        c, blk = b
        free_lists[c].add(blk)
        heapq.heappush(free_heaps[c], blk)
        chunk_used[(c, blk[0])] -= 1
        if chunk_used[(c, blk[0])] == 0:   # an empty chunk goes back to the pool of chunks
            for s in range(per_chunk[c]):
                free_lists[c].discard((blk[0], s))
            del chunk_used[(c, blk[0])]
            held[0] -= 1
    items = []
    live = 0
    for _ in range(n):
        v = size(); items.append([v, alloc(cls(v))]); live += v
    out = [held[0] * chunk / live]
    for r in range(rounds):
        for it in items:
            v = size(); b = alloc(cls(v)); free(it[1]); live += v - it[0]; it[0] = v; it[1] = b
        out.append(held[0] * chunk / live)
    return out, live / n

for name, step in (("sqrt2", 0.5), ("2^(1/4)", 0.25), ("powers of 2", 1.0)):
    sz = classes(step)
    for chunk in (64 << 10,):
        r, mean = run(sz, chunk, n=int(sys.argv[1]) if len(sys.argv) > 1 else 50_000)
        print(f"{name:12s} {len(sz):2d} classes, chunk {chunk >> 10:5d} KiB: mean value {mean:.0f} B; heap / live "
              f"after load {r[0]:.2f}, after 10 rounds {r[-1]:.2f}, worst {max(r):.2f}")
