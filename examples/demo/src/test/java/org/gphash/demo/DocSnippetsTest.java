package org.gphash.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.StringWriter;
import java.lang.reflect.InvocationTargetException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

import org.gphash.BackendUnavailableException;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every Java snippet of README.md and docs/USAGE.md, compiled against the API and run (issue 55: the
 * README's first snippet compiled, then threw). Each snippet becomes the body of a method of its own
 * class, with the imports a reader would write; the paths it names ({@code /dev/shm/...},
 * {@code /var/lib/...}, {@code /backup/...}) move under a temporary directory. A few names a snippet
 * takes as the reader's own are given here ({@link Given}). A snippet marked
 * {@code <!-- snippet: compile only ... -->} on the line before its fence is compiled, not run (its
 * device addresses are the reader's); one that needs a GPU runs where there is one.
 */
class DocSnippetsTest {

    private static final String IMPORTS = """
            import java.lang.invoke.MethodHandles;
            import java.nio.file.Path;
            import java.time.Duration;
            import java.util.concurrent.CompletableFuture;
            import java.util.concurrent.ConcurrentMap;
            import org.gphash.*;
            import org.gphash.bktcache.BktCacheConfig;
            import org.gphash.bktcache.CachePolicy;
            import org.gphash.cluster.*;
            """;

    /** The reader's own names, as static fields (a snippet's lambdas may reuse them as parameters). */
    private static final String GIVEN = """
                static byte[] value = new byte[128];
                static long key = 7L;
                static long n, kinds, keys, values, codes, out, lengths, outLengths;
                static GpuFeatures gpu;
                static void use(Object... what) {
                }
            """;

    /** Where the snippets' pools are, removed after the last. */
    private static Path pools;

    @org.junit.jupiter.api.AfterAll
    static void removePools() throws IOException {
        if (pools != null && Files.exists(pools)) {
            try (Stream<Path> all = Files.walk(pools)) {
                for (Path p : all.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    record Snippet(String file, int number, int line, String code, boolean compileOnly) {
    }

    @TestFactory
    Stream<DynamicTest> everySnippetCompilesAndRuns(@TempDir Path classes) throws IOException {
        // Pools on tmpfs where there is one, as the snippets have them (GPU pools must be there).
        Path shm = Path.of("/dev/shm");
        Path tmp = Files.isDirectory(shm) && Files.isWritable(shm) ? Files.createTempDirectory(shm, "gphash-snippets-")
                : classes;
        pools = tmp;
        List<Snippet> snippets = new ArrayList<>();
        snippets.addAll(snippets(root().resolve("README.md")));
        snippets.addAll(snippets(root().resolve("docs/USAGE.md")));
        assertTrue(snippets.size() >= 7, "found " + snippets.size() + " snippets");
        return snippets.stream().map(s -> DynamicTest.dynamicTest(s.file() + " snippet " + s.number() + " (line "
                + s.line() + ")", () -> compileAndRun(s, tmp.resolve(s.file().replace('/', '-') + "-" + s.number()))));
    }

    /** The project's root: tests run in the module's directory, two below it. */
    private static Path root() {
        Path here = Path.of("").toAbsolutePath();
        for (Path p = here; p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve("README.md")) && Files.isDirectory(p.resolve("docs"))) {
                return p;
            }
        }
        throw new IllegalStateException("no README.md above " + here);
    }

    static List<Snippet> snippets(Path markdown) throws IOException {
        List<String> lines = Files.readAllLines(markdown);
        List<Snippet> out = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            if (!lines.get(i).strip().equals("```java")) {
                continue;
            }
            boolean compileOnly = i > 0 && lines.get(i - 1).contains("<!-- snippet: compile only");
            StringBuilder code = new StringBuilder();
            int start = i + 1;
            for (i++; i < lines.size() && !lines.get(i).strip().equals("```"); i++) {
                code.append(lines.get(i)).append('\n');
            }
            out.add(new Snippet(root().relativize(markdown).toString(), out.size() + 1, start + 1, code.toString(),
                    compileOnly));
        }
        return out;
    }

    private static void compileAndRun(Snippet s, Path dir) throws Exception {
        Files.createDirectories(dir.resolve("backup"));
        Files.createDirectories(dir.resolve("var"));
        String body = s.code().replace("\"/dev/shm/", "\"" + dir + "/").replace("\"/var/lib/", "\"" + dir + "/var/")
                .replace("\"/backup/", "\"" + dir + "/backup/");
        String source = IMPORTS + "\npublic class Snippet {\n" + GIVEN + "\n    public static void run() throws Exception {\n"
                + body + "\n    }\n}\n";
        Path src = dir.resolve("Snippet.java");
        Files.writeString(src, source);
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        Assumptions.assumeTrue(javac != null, "no Java compiler in this runtime");
        StringWriter errors = new StringWriter();
        boolean compiled = javac.getTask(errors, null, null, List.of("-classpath", System.getProperty("java.class.path"),
                "-d", dir.toString(), "-proc:none", "-Xlint:none"), null,
                javac.getStandardFileManager(null, null, null).getJavaFileObjects(src)).call();
        assertTrue(compiled, s.file() + " snippet " + s.number() + " (line " + s.line() + ") does not compile:\n"
                + errors + "\n" + source);
        if (s.compileOnly()) {
            return;
        }
        try (URLClassLoader loader = new URLClassLoader(new URL[] {dir.toUri().toURL()},
                DocSnippetsTest.class.getClassLoader())) {
            loader.loadClass("Snippet").getMethod("run").invoke(null);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof BackendUnavailableException gpu && s.code().contains("Backend.GPU")) {
                Assumptions.abort("needs a GPU: " + gpu.getMessage());
            }
            throw new AssertionError(s.file() + " snippet " + s.number() + " (line " + s.line() + ") threw " + e.getCause(),
                    e.getCause());
        }
    }

    /** The harness finds every fence, and the marker before one. */
    @org.junit.jupiter.api.Test
    void theHarnessReadsFencesAndMarkers(@TempDir Path tmp) throws IOException {
        Path md = tmp.resolve("x.md");
        Files.writeString(md, "text\n```java\nint a = 1;\n```\n<!-- snippet: compile only -->\n```java\nint b;\n```\n```sh\nls\n```\n");
        List<Snippet> found = snippets(md);
        assertEquals(2, found.size());
        assertEquals("int a = 1;\n", found.get(0).code());
        assertTrue(found.get(1).compileOnly() && !found.get(0).compileOnly());
    }
}
