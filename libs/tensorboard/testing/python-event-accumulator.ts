// TensorBoard's own reader, where Python's `tensorboard` package is installed: its EventAccumulator loads an export
// folder and gives back every scalar (run -> tag -> [step, value][]). null when python3 or the package is absent.
import { spawnSync } from 'node:child_process';

const SCRIPT = `
import json, os, sys
from tensorboard.backend.event_processing import event_accumulator
root = sys.argv[1]
out = {}
for d, _, files in os.walk(root):
    if not any('tfevents' in f for f in files):
        continue
    acc = event_accumulator.EventAccumulator(d, size_guidance={event_accumulator.SCALARS: 0})
    acc.Reload()
    out[os.path.relpath(d, root)] = {t: [[e.step, e.value] for e in acc.Scalars(t)] for t in acc.Tags()['scalars']}
print(json.dumps(out))
`;

/** whether `python3 -c "import tensorboard"` works here */
export function pythonTensorBoardAvailable(): boolean {
  const r = spawnSync('python3', ['-c', 'import tensorboard'], { encoding: 'utf8' });
  return r.status === 0;
}

export function readWithEventAccumulator(root: string): Record<string, Record<string, Array<[number, number]>>> {
  const r = spawnSync('python3', ['-c', SCRIPT, root], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`EventAccumulator failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, Record<string, Array<[number, number]>>>;
}
