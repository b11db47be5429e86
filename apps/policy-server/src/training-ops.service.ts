// The training operations on a model, each queued in its model's seq_id order (TrainingModelsService.submitTraining):
// forward_backward and forward, optim_step, save_weights, load_weights and save_weights_for_sampler.
import { Injectable } from '@nestjs/common';
import {
  DatumShapeError,
  DenseSizeError,
  ProtoWireError,
  decodeForwardBackwardRequest,
  forwardBackwardRequestSchema,
  forwardRequestSchema,
  formatTinkerPath,
  isValidCheckpointName,
  loadWeightsRequestSchema,
  optimStepRequestSchema,
  parseTinkerPath,
  saveWeightsForSamplerRequestSchema,
  saveWeightsRequestSchema,
  wireToDatum,
  type Datum,
  type ForwardBackwardOutput,
  type ForwardBackwardRequest,
  type UntypedApiFuture,
} from '@rx/backend';
import { CallerError, apiError, parseRequest } from './api-error';
import { PolicyServerContext } from './policy-server.context';
import { SamplersService, samplingSessionId } from './samplers.service';
import { TrainingModelsService } from './training-models.service';

/**
 * The name a checkpoint gets in the backend: `<model id as a path segment>/<name>`, so that two training
 * clients (two arms) saving the same tinker name do not overwrite each other in a backend keyed by name.
 */
export function backendCheckpointName(modelId: string, name: string): string {
  return `${modelId.replace(/[^A-Za-z0-9._-]/g, '-')}/${name}`;
}

function checkName(endpoint: string, name: string): void {
  if (!isValidCheckpointName(name)) {
    throw apiError(400, `${endpoint}: '${name}' is not a checkpoint name (letters, digits, '.', '_', '-')`);
  }
}

@Injectable()
export class TrainingOpsService {
  constructor(
    private readonly ctx: PolicyServerContext,
    private readonly models: TrainingModelsService,
    private readonly samplers: SamplersService,
  ) {}

  /** forward_backward: a JSON body (SDK <= 0.24), or a ForwardBackwardRequest protobuf (0.25; forward_only = forward). */
  forwardBackward(body: unknown, key: string | undefined): Promise<UntypedApiFuture> {
    if (body instanceof Uint8Array) {
      let decoded: { request: unknown; forwardOnly: boolean };
      try {
        decoded = decodeForwardBackwardRequest(body);
      } catch (err) {
        if (err instanceof ProtoWireError) throw apiError(400, `forward_backward: ${err.message}`);
        throw err;
      }
      return this.runPass(decoded.forwardOnly ? 'forward' : 'forward_backward', decoded.request, key);
    }
    return this.runPass('forward_backward', body, key);
  }

  /** forward (SDK <= 0.24.1): `{model_id, seq_id, forward_input}`, the same pass with no gradient kept. */
  async forward(body: unknown, key: string | undefined): Promise<UntypedApiFuture> {
    const req = await this.models.refusing(body, () => parseRequest('forward', forwardRequestSchema, body));
    return this.runPass('forward', { model_id: req.model_id, seq_id: req.seq_id, forward_backward_input: req.forward_input }, key);
  }

  private async runPass(endpoint: 'forward' | 'forward_backward', body: unknown, key: string | undefined): Promise<UntypedApiFuture> {
    const { req, datums } = await this.models.refusing(body, async () => {
      const req: ForwardBackwardRequest = parseRequest(endpoint, forwardBackwardRequestSchema, body);
      const input = req.forward_backward_input;
      if (input.loss_fn !== 'importance_sampling') {
        throw apiError(400, `loss_fn '${input.loss_fn}' is not supported by this server (importance_sampling only)`);
      }
      if (input.data.length === 0) throw apiError(400, `${endpoint}: forward_backward_input.data is empty`);
      let datums: Datum[];
      try {
        // a sparse tensor expands to at most the request's token limit (one value per position)
        const limit = this.ctx.config.maxTokensPerRequest;
        datums = input.data.map((d, i) => wireToDatum(d, i, limit));
      } catch (err) {
        if (err instanceof DatumShapeError) throw apiError(400, `${endpoint}: ${err.message}${err instanceof DenseSizeError ? ' (RX_POLICY_MAX_TOKENS_PER_REQUEST)' : ''}`);
        throw err;
      }
      this.ctx.checkTokens(endpoint, datums.reduce((n, d) => n + d.inputTokens.length, 0));
      if (endpoint === 'forward' && !this.models.model(req.model_id).client.forward) {
        throw apiError(400, 'forward: this backend has no forward-only pass');
      }
      const sequences = datums.flatMap((d, i) => [
        { what: `datum ${i} model_input`, tokens: d.inputTokens },
        { what: `datum ${i} target_tokens`, tokens: d.targetTokens },
      ]);
      await this.ctx.limits.checkSequences(endpoint, this.models.model(req.model_id).baseModel, sequences);
      return { req, datums };
    });
    return this.models.submitTraining(endpoint, key, req.model_id, req.seq_id, req, async (m) => {
      const exact = endpoint === 'forward' ? await m.client.forward!(datums, 'importance_sampling') : await m.client.forwardBackward(datums, 'importance_sampling');
      const res = this.ctx.noise ? this.ctx.noise.apply(datums, exact) : exact;
      const out: ForwardBackwardOutput = {
        loss_fn_output_type: 'importance_sampling',
        loss_fn_outputs: res.logprobs.map((lp) => ({ logprobs: { data: lp, dtype: 'float32', shape: [lp.length] } })),
        metrics: { 'loss:sum': res.loss },
      };
      this.ctx.protobufResults.set(out, 'forward_backward');
      return out;
    });
  }

  async optimStep(body: unknown, key: string | undefined): Promise<UntypedApiFuture> {
    const req = await this.models.refusing(body, () => {
      const req = parseRequest('optim_step', optimStepRequestSchema, body);
      if (req.adam_params.grad_clip_norm > 0) throw apiError(400, 'optim_step: grad_clip_norm > 0 is not supported by this server');
      return req;
    });
    const adam = req.adam_params;
    return this.models.submitTraining('optim_step', key, req.model_id, req.seq_id, req, async (m) => {
      const { step } = await m.client.optimStep({
        learningRate: adam.learning_rate,
        beta1: adam.beta1,
        beta2: adam.beta2,
        eps: adam.eps,
        weightDecay: adam.weight_decay,
      });
      return { metrics: { 'step:max': step } };
    });
  }

  async saveWeights(body: unknown, key: string | undefined): Promise<UntypedApiFuture> {
    const { req, name } = await this.models.refusing(body, () => {
      const req = parseRequest('save_weights', saveWeightsRequestSchema, body);
      const name = req.path ?? `state-${req.seq_id}`;
      checkName('save_weights', name);
      return { req, name };
    });
    return this.models.submitTraining('save_weights', key, req.model_id, req.seq_id, req, async (m) => {
      const tinkerPath = formatTinkerPath({ runId: m.modelId, kind: 'weights', name });
      if (this.ctx.paths.has(tinkerPath) && !req.overwrite) {
        throw new CallerError(`training state '${tinkerPath}' already exists; save under another name or send overwrite: true`);
      }
      const backendPath = await m.client.saveState(backendCheckpointName(m.modelId, name));
      this.ctx.paths.set(tinkerPath, { backendPath, baseModel: m.baseModel, loraRank: m.rank });
      return { path: tinkerPath, type: 'save_weights' };
    });
  }

  /** load_weights into an existing training client: weights and optimizer state, or (optimizer: false) weights only. */
  async loadWeights(body: unknown, key: string | undefined): Promise<UntypedApiFuture> {
    const req = await this.models.refusing(body, () => {
      const req = parseRequest('load_weights', loadWeightsRequestSchema, body);
      if (!req.model_id || !req.seq_id) {
        throw apiError(400, 'load_weights: this server loads into an existing training client (send model_id and seq_id; client/config says create_model_via_load_weights: false)');
      }
      if (parseTinkerPath(req.path)?.kind !== 'weights') {
        throw apiError(400, `load_weights: '${req.path}' is not a tinker://<run>/weights/<name> path from save_weights`);
      }
      if (!req.optimizer && !this.models.model(req.model_id).client.loadWeights) {
        throw apiError(400, 'load_weights: this backend loads weights together with the optimizer state only (optimizer: true)');
      }
      return { ...req, model_id: req.model_id, seq_id: req.seq_id };
    });
    return this.models.submitTraining('load_weights', key, req.model_id, req.seq_id, req, async (m) => {
      const entry = this.ctx.paths.get(req.path);
      if (!entry) throw new CallerError(`no training state at '${req.path}'`);
      if (entry.baseModel !== m.baseModel) {
        throw new CallerError(`'${req.path}' was saved from base model ${entry.baseModel}, this model is ${m.baseModel}`);
      }
      if (req.optimizer) await m.client.loadState(entry.backendPath);
      else await m.client.loadWeights!(entry.backendPath);
      return { path: req.path, type: 'load_weights' };
    });
  }

  async saveWeightsForSampler(body: unknown, key: string | undefined): Promise<UntypedApiFuture> {
    const { req, name } = await this.models.refusing(body, () => {
      const req = parseRequest('save_weights_for_sampler', saveWeightsForSamplerRequestSchema, body);
      if (!req.path && (req.sampling_session_seq_id === undefined || req.sampling_session_seq_id === null)) {
        throw apiError(400, 'save_weights_for_sampler: send a path (a name) or a sampling_session_seq_id');
      }
      const name = req.path ?? `ephemeral-${req.seq_id}`;
      checkName('save_weights_for_sampler', name);
      return { req, name };
    });
    const ephemeralSeq = req.sampling_session_seq_id;
    return this.models.submitTraining('save_weights_for_sampler', key, req.model_id, req.seq_id, req, async (m) => {
      const backendPath = await m.client.saveWeightsForSampler(backendCheckpointName(m.modelId, name));
      if (req.path) {
        const tinkerPath = formatTinkerPath({ runId: m.modelId, kind: 'sampler_weights', name });
        this.ctx.paths.set(tinkerPath, { backendPath, baseModel: m.baseModel });
        return { path: tinkerPath, type: 'save_weights_for_sampler' };
      }
      const samplerId = samplingSessionId(m.sessionId, String(ephemeralSeq));
      if (this.samplers.has(samplerId)) throw new CallerError(`sampling_session_seq_id ${ephemeralSeq} was already used`);
      this.samplers.openEphemeral(samplerId, m.sessionId, m.baseModel, await this.ctx.backend.createSamplingClient(backendPath));
      return { path: null, sampling_session_id: samplerId, type: 'save_weights_for_sampler' };
    });
  }
}
