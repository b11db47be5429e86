import { InMemoryRolloutWindowStore } from './rollout-window.store';
import { describeWindowStoreContract } from '@rx/pipeline/testing';

describeWindowStoreContract('InMemoryRolloutWindowStore', () => new InMemoryRolloutWindowStore());
