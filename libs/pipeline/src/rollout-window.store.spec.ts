import { InMemoryRolloutWindowStore } from './rollout-window.store';
import { describeWindowStoreContract } from './testing/window-store.contract';

describeWindowStoreContract('InMemoryRolloutWindowStore', () => new InMemoryRolloutWindowStore());
