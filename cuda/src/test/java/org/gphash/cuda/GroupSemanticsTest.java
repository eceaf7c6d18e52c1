package org.gphash.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.Size;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.cuda.GroupSemanticsModel.Group;

/**
 * The pipeline's scan-based semantics ({@link GroupSemanticsModel}, the algorithm of
 * pipe_semantics.cuh) against running each group's operations one by one in batch order, on a
 * plain model of one key: same outcome, same output value, same final state. Runs in CI.
 */
class GroupSemanticsTest {

    @Provide
    Arbitrary<Group> groups() {
        // Conditional kinds never reach the kernels (ConditionalBatches turns them into these first).
        Arbitrary<List<OpKind>> ops = Arbitraries.of(OpKind.class).filter(k -> !k.isConditional()).list().ofMinSize(1)
                .ofMaxSize(12);
        return net.jqwik.api.Combinators.combine(Arbitraries.of(true, false), ops).as(Group::new);
    }

    @Property(tries = 2000)
    void scansMatchSerialExecution(@ForAll @Size(min = 1, max = 8) List<@net.jqwik.api.From("groups") Group> batch) {
        GroupSemanticsModel.Result r = GroupSemanticsModel.run(batch);
        // Serial execution per group: state (present, source of the current value).
        int i = 0;
        for (int g = 0; g < batch.size(); g++) {
            boolean present = batch.get(g).present0();
            int source = present ? GroupSemanticsModel.POOL : GroupSemanticsModel.NONE;
            for (OpKind k : batch.get(g).kinds()) {
                Outcome expected;
                int output = GroupSemanticsModel.NONE;
                switch (k) {
                    case GET -> {
                        expected = present ? Outcome.FOUND : Outcome.NOT_FOUND;
                        output = present ? source : GroupSemanticsModel.NONE;
                    }
                    case PUT -> {
                        expected = present ? Outcome.UPDATED : Outcome.INSERTED;
                        present = true;
                        source = i;
                    }
                    case INSERT -> {
                        expected = present ? Outcome.EXISTS : Outcome.INSERTED;
                        if (!present) {
                            present = true;
                            source = i;
                        }
                    }
                    case UPDATE -> {
                        expected = present ? Outcome.UPDATED : Outcome.NOT_FOUND;
                        if (present) {
                            source = i;
                        }
                    }
                    case DELETE -> {
                        expected = present ? Outcome.DELETED : Outcome.NOT_FOUND;
                        present = false;
                        source = GroupSemanticsModel.NONE;
                    }
                    case READ_MODIFY_WRITE -> {
                        expected = present ? Outcome.REPLACED : Outcome.NOT_FOUND;
                        output = present ? source : GroupSemanticsModel.NONE;
                        if (present) {
                            source = i;
                        }
                    }
                    default -> throw new AssertionError(k);
                }
                assertEquals(expected, r.outcomes()[i], "position " + i + " " + k);
                assertEquals(output, r.outputSource()[i], "position " + i + " " + k + ": output value source");
                i++;
            }
            GroupSemanticsModel.Net net = r.nets()[i - 1];
            boolean p0 = batch.get(g).present0();
            String action = p0 && !present ? "DELETE"
                    : present && source >= 0 ? (p0 ? "UPDATE" : "INSERT") : "NONE";
            assertEquals(action, net.action(), "group " + g + " net effect");
            if (source >= 0 && present) {
                assertEquals(source, net.source(), "group " + g + ": the value it ends with");
            }
        }
    }
}
