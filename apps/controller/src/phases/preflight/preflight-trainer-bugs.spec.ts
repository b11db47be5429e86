// The real correctness preflight on the embedded backend passes on the unmodified code and fails on each trainer
// bug (sign-flipped loss, exp dropped from the ratio, loss / token count, sampler logprobs replaced by the
// learner's, optimizer step applied twice), the failing check named (testing/injected-bugs.fixture.ts).
import { describePreflightAgainst, TRAINER_BUGS } from './testing/injected-bugs.fixture';

jest.setTimeout(300_000);

describePreflightAgainst('the correctness preflight against trainer bugs (embedded backend)', TRAINER_BUGS, { clean: true });
