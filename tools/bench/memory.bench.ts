// 6. Memory: peak resident memory (VmHWM in /proc/<pid>/status) of each pipeline service during a run of the
// embedded experiment's steps (both arms side by side, through the four services on BullMQ and the real
// Redis, the embedded model behind the policy server), and how resident memory moved from the first step on.
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseNumericFlags } from './bench-args';
import { benchCheckpoint } from './bench-checkpoint';
import { processMemory, startNodeProcess, type BenchProcess } from './bench-process';
import { fmt, verdict } from './bench-stats';
import { ARMS, embeddedStepRequest } from './bench-steps';
import { loadSampler, machineInfo, machineLine, reproduce, table, type Benchmark } from './benchmarks-doc';
import { benchPrefix, deletePrefix, ServiceStack, StepDriver } from './service-stack';

const FLAGS = {
  steps: { default: 4, min: 1, max: 40, help: 'steps of both arms' },
};

const TARGET_MIB = 300;

interface Sample {
  name: string;
  peakMiB: number;
  afterFirstMiB: number;
  endMiB: number;
}

export const memoryBenchmark: Benchmark = {
  name: 'memory',
  summary: 'peak RSS of each service process during embedded-model steps through the pipeline',
  async run(argv) {
    const o = parseNumericFlags('memory', argv, FLAGS);
    const machine = machineInfo();
    const load = loadSampler();
    const ckpt = benchCheckpoint();
    const work = mkdtempSync(path.join(os.tmpdir(), 'rx-bench-memory-'));
    const prefix = benchPrefix('memory');
    let server: BenchProcess | undefined;
    let stack: ServiceStack | undefined;
    let driver: StepDriver | undefined;
    const samples: Sample[] = [];
    const t0 = performance.now();
    try {
      server = await startNodeProcess('policy-server', 'tools/bench/policy-server.entry.ts', {
        RX_BENCH_POLICY: 'embedded',
        RX_BENCH_BASE_CHECKPOINT: ckpt.dir,
        RX_DATA_DIR: path.join(work, 'policy'),
      });
      stack = await ServiceStack.start({ prefix, backendUrl: server.url, dataDir: path.join(work, 'services'), replicas: { sampler: 1, grader: 1, advantage: 1, trainer: 1 } });
      driver = new StepDriver(prefix);
      const all = [...stack.processes, server];
      const afterFirst = new Map<string, number>();
      for (let step = 0; step < o.steps; step++) {
        await driver.runStep(ARMS.map((arm) => embeddedStepRequest('bench-memory', arm, step)));
        if (step === 0) for (const p of all) afterFirst.set(p.name, processMemory(p.pid).rssMiB);
        process.stdout.write(`memory: step ${step} done\n`);
      }
      for (const p of all) {
        const m = processMemory(p.pid);
        samples.push({ name: p.name, peakMiB: m.peakRssMiB, afterFirstMiB: afterFirst.get(p.name) ?? m.rssMiB, endMiB: m.rssMiB });
      }
    } finally {
      await driver?.close().catch(() => undefined);
      await stack?.stop();
      await server?.stop();
      await deletePrefix(prefix).catch(() => undefined);
      rmSync(work, { recursive: true, force: true });
      ckpt.cleanup();
    }
    const elapsed = (performance.now() - t0) / 1000;
    const loads = load.stop();
    const workers = samples.filter((s) => s.name !== 'policy-server');
    const worst = workers.reduce((a, b) => (b.peakMiB > a.peakMiB ? b : a));
    const rows = samples.map((s) => [
      s.name === 'policy-server' ? 'policy server (EmbeddedBackend; not a worker)' : s.name.replace(/-1$/, ''),
      `${fmt(s.peakMiB)} MiB`,
      `${fmt(s.afterFirstMiB)} MiB`,
      `${fmt(s.endMiB)} MiB`,
      `${s.endMiB >= s.afterFirstMiB ? '+' : ''}${fmt(s.endMiB - s.afterFirstMiB)} MiB`,
    ]);
    const notes: string[] = [];
    if (worst.peakMiB > TARGET_MIB) {
      notes.push(
        `- ${worst.name.replace(/-1$/, '')} peaks at ${fmt(worst.peakMiB)} MiB, ${fmt(worst.peakMiB - TARGET_MIB)} MiB over the target. ` +
          'A service process loads NestJS, BullMQ, ioredis, zod and swc-node (the TypeScript is compiled in the process at start-up); ' +
          'running the compiled JavaScript (no swc-node register) and `--max-old-space-size` would bring it down.',
      );
    }
    const markdown = [
      '## 6. Memory',
      '',
      `Command: \`${reproduce('memory', argv)}\` (${fmt(elapsed)} s). ${machineLine(machine, loads)}`,
      '',
      `${o.steps} steps of both arms (64 rollouts each, max_tokens 32) through the four services (real main.ts, started with ` +
        '`node -r ./tools/register.js`, as the Dockerfile does) on BullMQ and the real Redis, the EmbeddedBackend on ' +
        `${ckpt.description} behind the policy server. Peak = VmHWM of /proc/<pid>/status at the end of the run (the high-water mark since the process started).`,
      '',
      table(['process', 'peak RSS (VmHWM)', 'RSS after step 1', 'RSS at the end', 'change from step 1'], rows),
      '',
      `- **Largest worker peak: ${worst.name.replace(/-1$/, '')} ${fmt(worst.peakMiB)} MiB**: ${verdict(worst.peakMiB, TARGET_MIB, 'max', ' MiB')}.`,
      ...notes,
    ].join('\n');
    return { markdown, lines: [`memory: peak RSS ${samples.map((s) => `${s.name.replace(/-1$/, '')} ${fmt(s.peakMiB)} MiB`).join(', ')} (target <= ${TARGET_MIB} MiB per worker)`] };
  },
};
