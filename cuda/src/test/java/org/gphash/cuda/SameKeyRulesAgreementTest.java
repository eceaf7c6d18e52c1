package org.gphash.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import org.gphash.OpKind;
import org.gphash.cuda.GroupSemanticsModel.Group;
import org.junit.jupiter.api.Test;

/**
 * The kernels' same-key rules (table/same_key_rules.cuh) run as the pipeline's semantics stage runs them,
 * on the CPU (cuda/src/test/cuda/same_key_check.cu, built by nvcc), against the Java model of that
 * stage ({@link GroupSemanticsModel}, which {@link GroupSemanticsTest} holds to serial execution):
 * every batch of one group of up to four operations, and random batches of several groups. A changed
 * outcome, a kind that sets presence or the value source when it should not, or a scan read across
 * a group's start, in the CUDA header, fails here in CI without a GPU (nvcc only; skipped without it).
 */
class SameKeyRulesAgreementTest {

    private static final HostCheckProgram CHECKER = new HostCheckProgram("same_key_check");
    /** The kinds that reach the kernels (conditional ones are turned into these on the host first). */
    private static final OpKind[] KINDS = {OpKind.GET, OpKind.PUT, OpKind.INSERT, OpKind.UPDATE, OpKind.DELETE,
            OpKind.READ_MODIFY_WRITE};
    /** table/same_key_rules.cuh's NetAction, by the model's names. */
    private static final Map<String, Integer> ACTIONS = Map.of("NONE", 0, "UPDATE", 1, "INSERT", 2, "DELETE", 3);

    @Test
    void everyGroupOfUpToFourOperations() throws Exception {
        List<List<Group>> batches = new ArrayList<>();
        for (int length = 1; length <= 4; length++) {
            int combinations = (int) Math.pow(KINDS.length, length);
            for (int c = 0; c < combinations; c++) {
                List<OpKind> ops = new ArrayList<>();
                for (int i = 0, x = c; i < length; i++, x /= KINDS.length) {
                    ops.add(KINDS[x % KINDS.length]);
                }
                batches.add(List.of(new Group(false, ops)));
                batches.add(List.of(new Group(true, ops)));
            }
        }
        check(batches);
    }

    @Test
    void randomBatchesOfSeveralGroups() throws Exception {
        SplittableRandom random = new SplittableRandom(20261126L);
        List<List<Group>> batches = new ArrayList<>();
        for (int b = 0; b < 3000; b++) {
            List<Group> groups = new ArrayList<>();
            for (int g = 0, count = 1 + random.nextInt(8); g < count; g++) {
                List<OpKind> ops = new ArrayList<>();
                for (int i = 0, length = 1 + random.nextInt(12); i < length; i++) {
                    ops.add(KINDS[random.nextInt(KINDS.length)]);
                }
                groups.add(new Group(random.nextBoolean(), ops));
            }
            batches.add(groups);
        }
        check(batches);
    }

    private static void check(List<List<Group>> batches) throws Exception {
        List<String> inputs = batches.stream().map(SameKeyRulesAgreementTest::line).toList();
        List<String> out = CHECKER.run(inputs);
        for (int i = 0; i < batches.size(); i++) {
            assertEquals(modelLine(batches.get(i)), out.get(i), "batch " + inputs.get(i));
        }
    }

    /** The checker's input: groups separated by ';', each "P:K K K". */
    private static String line(List<Group> batch) {
        StringBuilder s = new StringBuilder();
        for (Group g : batch) {
            s.append(s.isEmpty() ? "" : ";").append(g.present0() ? '1' : '0').append(':');
            for (int i = 0; i < g.kinds().size(); i++) {
                s.append(i == 0 ? "" : " ").append(g.kinds().get(i).ordinal());
            }
        }
        return s.toString();
    }

    /** What the model gives, in the checker's output format. */
    private static String modelLine(List<Group> batch) {
        int n = batch.stream().mapToInt(g -> g.kinds().size()).sum();
        GroupSemanticsModel.Result r = GroupSemanticsModel.run(batch);
        StringBuilder s = new StringBuilder();
        for (int p = 0; p < n; p++) {
            s.append(r.outcomes()[p].code()).append(',').append(source(r.outputSource()[p])).append(' ');
        }
        s.append('|');
        for (int p = 0; p < n; p++) {
            GroupSemanticsModel.Net net = r.nets()[p];
            if (net != null) {
                boolean writes = net.action().equals("UPDATE") || net.action().equals("INSERT");
                s.append(' ').append(ACTIONS.get(net.action())).append(',').append(writes ? source(net.source()) : "-");
            }
        }
        return s.toString();
    }

    private static String source(int s) {
        return s == GroupSemanticsModel.POOL ? "P" : s == GroupSemanticsModel.NONE ? "-" : Integer.toString(s);
    }
}
