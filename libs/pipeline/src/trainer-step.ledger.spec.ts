import { InMemoryTrainerStepLedger } from './trainer-step.ledger';
import { describeLedgerContract } from '@rx/pipeline/testing';

describeLedgerContract('InMemoryTrainerStepLedger', () => new InMemoryTrainerStepLedger());
