package org.gphash.demo;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * The project's style rules that review kept having to restate (issue 54): imports in one order, and
 * main code imports the types it uses instead of naming them fully inline ({@code java.util.List}, {@code
 * org.gphash.format.PoolHeader} in a method body). A qualified name stays where it must: a simple name
 * that the file already uses for another type (declared in it, in its package, or imported). Comments
 * and string literals are not code and are not checked.
 */
class SourceStyleTest {

    private static final Pattern QUALIFIED = Pattern.compile("(?<![\\w.])((?:java|javax|org\\.gphash)(?:\\.[a-z]\\w*)+)\\.([A-Z]\\w*)");
    private static final Pattern STRING = Pattern.compile("\"(?:\\\\.|[^\"\\\\])*\"|'(?:\\\\.|[^'\\\\])'");
    private static final Pattern IMPORT = Pattern.compile("import ([\\w.]+);");
    private static final Pattern CARD = Pattern.compile("\\b(?:[ABH]100|G?H200|B200)\\b");
    private static final Pattern DECLARED = Pattern.compile("\\b(?:class|interface|record|enum)\\s+([A-Z]\\w*)");

    @Test
    void mainCodeImportsWhatItUses() throws IOException {
        Path root = repositoryRoot();
        List<Path> files = sources(root, "src/main/java/");
        assertTrue(files.size() > 250, "found " + files.size() + " sources under " + root);
        List<String> found = new ArrayList<>();
        for (Path f : files) {
            found.addAll(inlineQualifiedNames(root, f));
        }
        assertTrue(found.isEmpty(), found.size() + " types named fully inline; import them:\n  "
                + String.join("\n  ", found.subList(0, Math.min(40, found.size()))));
    }

    /**
     * Imports in one order everywhere, so that a change's diff shows what it imports and not a
     * reshuffle: static imports first, then {@code java} and {@code javax}, then everything else,
     * each group sorted, one blank line between groups, nothing else among them.
     */
    @Test
    void importsAreGroupedAndSorted() throws IOException {
        Path root = repositoryRoot();
        List<Path> files = sources(root, "/src/");
        assertTrue(files.size() > 500, "found " + files.size() + " sources under " + root);
        List<String> unsorted = new ArrayList<>();
        for (Path f : files) {
            List<String> lines = Files.readAllLines(f);
            int first = -1;
            int last = -1;
            for (int i = 0; i < lines.size(); i++) {
                if (lines.get(i).startsWith("import ")) {
                    first = first < 0 ? i : first;
                    last = i;
                }
            }
            if (first >= 0 && !lines.subList(first, last + 1).equals(canonicalImports(lines.subList(first, last + 1)))) {
                unsorted.add(root.relativize(f).toString());
            }
        }
        assertTrue(unsorted.isEmpty(), unsorted.size() + " files import out of order (static; java, javax; the rest; "
                + "each sorted, a blank line between):\n  " + String.join("\n  ", unsorted.subList(0, Math.min(40, unsorted.size()))));
    }

    /**
     * Comments explain, docs/PERFORMANCE.md measures: main code (Java and CUDA) names no GPU, since a
     * figure worth quoting comes with its card, and figures go stale in code where PERFORMANCE.md's
     * are rerun. A comment says why and cites the measurement (PERFORMANCE.md's section, or a lab log).
     */
    @Test
    void mainCodeQuotesNoMachineFigures() throws IOException {
        Path root = repositoryRoot();
        List<Path> files = new ArrayList<>(sources(root, "src/main/java/"));
        try (Stream<Path> all = Files.walk(root)) {
            all.filter(p -> (p.toString().endsWith(".cu") || p.toString().endsWith(".cuh"))
                    && root.relativize(p).toString().contains("src/main/") && !p.toString().contains("/target/"))
                    .forEach(files::add);
        }
        List<String> found = new ArrayList<>();
        for (Path f : files) {
            List<String> lines = Files.readAllLines(f);
            for (int i = 0; i < lines.size(); i++) {
                if (CARD.matcher(lines.get(i)).find()) {
                    found.add(root.relativize(f) + ":" + (i + 1) + " " + lines.get(i).strip());
                }
            }
        }
        assertTrue(found.isEmpty(), found.size() + " lines of main code name a GPU (a machine figure: cite "
                + "docs/PERFORMANCE.md or a lab log instead):\n  " + String.join("\n  ", found.subList(0, Math.min(40, found.size()))));
    }

    /** The import lines of {@code region} in the canonical order (see {@link #importsAreGroupedAndSorted}). */
    private static List<String> canonicalImports(List<String> region) {
        Set<String> imports = new TreeSet<>();
        for (String l : region) {
            if (!l.isBlank()) {
                imports.add(l);
            }
        }
        List<List<String>> groups = List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
        for (String l : imports) {
            int g = l.startsWith("import static ") ? 0 : l.startsWith("import java.") || l.startsWith("import javax.") ? 1 : 2;
            groups.get(g).add(l);
        }
        List<String> out = new ArrayList<>();
        for (List<String> g : groups) {
            if (!g.isEmpty()) {
                if (!out.isEmpty()) {
                    out.add("");
                }
                out.addAll(g);
            }
        }
        return out;
    }

    private static Path repositoryRoot() {
        Path root = Path.of("").toAbsolutePath();
        while (!Files.isRegularFile(root.resolve("README.md")) || !Files.isDirectory(root.resolve("docs"))) {
            root = root.getParent();
        }
        return root;
    }

    /** The Java sources under {@code root} whose path contains {@code within}, build output and descriptors left out. */
    private static List<Path> sources(Path root, String within) throws IOException {
        try (Stream<Path> all = Files.walk(root)) {
            return all.filter(p -> p.toString().endsWith(".java") && root.relativize(p).toString().contains(within)
                    && !p.toString().contains("/target/") && !p.toString().contains("/.git/")
                    && !p.getFileName().toString().equals("module-info.java")
                    && !p.getFileName().toString().equals("package-info.java")).sorted().toList();
        }
    }

    private static List<String> inlineQualifiedNames(Path root, Path file) throws IOException {
        String src = Files.readString(file);
        Set<String> taken = new HashSet<>();
        Map<String, String> imported = new HashMap<>();
        Matcher d = DECLARED.matcher(src);
        while (d.find()) {
            taken.add(d.group(1));
        }
        try (Stream<Path> siblings = Files.list(file.getParent())) {
            siblings.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".java"))
                    .forEach(n -> taken.add(n.substring(0, n.length() - 5)));
        }
        String[] lines = src.split("\n", -1);
        for (String l : lines) {
            Matcher m = IMPORT.matcher(l);
            if (l.startsWith("import ") && m.find()) {
                String fq = m.group(1);
                imported.put(fq.substring(fq.lastIndexOf('.') + 1), fq);
            }
        }
        String pkg = src.lines().filter(l -> l.startsWith("package ")).findFirst()
                .map(l -> l.substring(8, l.indexOf(';')).trim()).orElse("");
        Map<String, Set<String>> inline = new HashMap<>();
        List<Integer> at = new ArrayList<>();
        List<String> names = new ArrayList<>();
        boolean textBlock = false;
        for (int i = 0; i < lines.length; i++) {
            String l = lines[i];
            if (l.contains("\"\"\"")) {
                textBlock = !textBlock;
                continue;
            }
            String t = l.strip();
            if (textBlock || l.startsWith("import ") || l.startsWith("package ") || t.startsWith("*") || t.startsWith("/*")
                    || t.startsWith("//")) {
                continue;
            }
            String code = STRING.matcher(l).replaceAll("\"\"");
            int comment = code.indexOf("//");
            int block = code.indexOf("/*");
            int cut = comment < 0 ? block : block < 0 ? comment : Math.min(comment, block);
            if (cut >= 0) {
                code = code.substring(0, cut);
            }
            Matcher q = QUALIFIED.matcher(code);
            while (q.find()) {
                String fq = q.group(1) + "." + q.group(2);
                inline.computeIfAbsent(q.group(2), k -> new HashSet<>()).add(fq);
                names.add(fq);
                at.add(i + 1);
            }
        }
        List<String> out = new ArrayList<>();
        for (int k = 0; k < names.size(); k++) {
            String fq = names.get(k);
            String simple = fq.substring(fq.lastIndexOf('.') + 1);
            String own = fq.substring(0, fq.lastIndexOf('.'));
            boolean clash = !own.equals(pkg) && (taken.contains(simple)
                    || imported.containsKey(simple) && !imported.get(simple).equals(fq)
                    || inline.getOrDefault(simple, Set.of()).size() > 1);
            if (!clash) {
                out.add(root.relativize(file) + ":" + at.get(k) + " " + fq);
            }
        }
        return out;
    }
}
