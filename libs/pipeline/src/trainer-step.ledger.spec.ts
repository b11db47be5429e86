import { InMemoryTrainerStepLedger } from './trainer-step.ledger';
import { describeLedgerContract } from './testing/ledger.contract';

describeLedgerContract('InMemoryTrainerStepLedger', () => new InMemoryTrainerStepLedger());
