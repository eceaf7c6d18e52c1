#!/usr/bin/env python3
"""The structure drawing of issue 54: the import graph of main Java code, by file and by package,
and its circles (strongly connected components). A file depends on another when it imports it,
names it fully, or uses a class of its own package by its simple name (comments and strings left
out).

    python3 .ci/structure.py            # the circles of files and of packages
    python3 .ci/structure.py --edges    # and, inside each circle of files, who imports whom
"""
import collections
import os
import re
import sys


def strip(src):
    src = re.sub(r'/\*.*?\*/', ' ', src, flags=re.S)
    src = re.sub(r'//[^\n]*', ' ', src)
    return re.sub(r'"(?:\\.|[^"\\])*"', '""', src)


def graph(root):
    classes, sources = {}, {}
    for d, _, files in os.walk(root):
        if '/target' in d or '/.git' in d or '/src/main/java' not in d:
            continue
        for f in files:
            if f.endswith('.java') and f not in ('module-info.java', 'package-info.java'):
                p = os.path.join(d, f)
                src = open(p).read()
                m = re.search(r'^package ([\w.]+);', src, re.M)
                fq = m.group(1) + '.' + f[:-5]
                classes[fq] = p
                sources[fq] = strip(src)
    by_package = collections.defaultdict(set)
    for fq in classes:
        by_package[fq.rsplit('.', 1)[0]].add(fq.rsplit('.', 1)[1])
    edges = collections.defaultdict(set)
    for fq, code in sources.items():
        pkg = fq.rsplit('.', 1)[0]
        for imp in re.findall(r'^import (?:static )?([\w.]+)(?:\.\*)?;', code, re.M):
            parts = imp.split('.')
            for i in range(len(parts), 0, -1):
                c = '.'.join(parts[:i])
                if c in classes and c != fq:
                    edges[fq].add(c)
                    break
        body = re.sub(r'^import [^\n]*', '', code, flags=re.M)
        for name in by_package[pkg]:
            c = pkg + '.' + name
            if c != fq and re.search(r'\b%s\b' % name, body):
                edges[fq].add(c)
        for m in re.finditer(r'\b(org\.gphash(?:\.[a-z]\w*)+)\.([A-Z]\w*)', body):
            c = m.group(1) + '.' + m.group(2)
            if c in classes and c != fq:
                edges[fq].add(c)
    return classes, by_package, edges


def circles(nodes, adj):
    sys.setrecursionlimit(100000)
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in adj.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    classes, by_package, edges = graph(root)
    short = lambda c: c.replace('org.gphash.', '')
    files = circles(classes, edges)
    print('%d main classes in %d packages' % (len(classes), len(by_package)))
    print('circles of files: %d (%d files)' % (len(files), sum(map(len, files))))
    for c in files:
        print('  ' + ' '.join(short(x) for x in c))
        if '--edges' in sys.argv:
            for a in c:
                print('      %s -> %s' % (short(a), ', '.join(sorted(short(b) for b in edges[a] if b in c))))
    package_edges = collections.defaultdict(set)
    for a, bs in edges.items():
        for b in bs:
            pa, pb = a.rsplit('.', 1)[0], b.rsplit('.', 1)[0]
            if pa != pb:
                package_edges[pa].add(pb)
    packages = circles(by_package, package_edges)
    print('circles of packages: %d' % len(packages))
    for c in packages:
        print('  ' + ' '.join(c))


if __name__ == '__main__':
    main()
