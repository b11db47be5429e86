// The real correctness preflight on the embedded backend fails on each bug of the loop's advantage stage and
// Datum builder (prompt tokens carrying the advantage, targets shifted by one, kernel self-weight, h^2 for 2h^2,
// window not carried across steps, phi not standardised, group mean over the batch), the failing check named
// (testing/injected-bugs.fixture.ts).
import { describePreflightAgainst, LOOP_BUGS } from './testing/injected-bugs.fixture';

jest.setTimeout(300_000);

describePreflightAgainst('the correctness preflight against loop bugs (embedded backend)', LOOP_BUGS, { clean: false });
