// The /api/v1 routes of the Tinker protocol subset. Thin: each hands its body (and X-Idempotency-Key) to the
// service of its group (sessions, training models, training operations, samplers, futures, checkpoints). Every route answers 200 like the Tinker service (POST included). forward_backward takes a
// JSON or a protobuf body (read into bytes by protobufBodyMiddleware); retrieve_future answers protobuf to a
// client that sends `Accept: application/x-protobuf`.
import { Body, Controller, Get, Headers, HttpCode, Param, Post, Req, Res, StreamableFile } from '@nestjs/common';
import type { Request, Response } from 'express';
import { PROTOBUF_CONTENT_TYPE } from '@rx/backend';
import { Public } from './auth';
import { CheckpointsService } from './checkpoints.service';
import { FuturesService } from './futures.service';
import { SamplersService } from './samplers.service';
import { SessionsService } from './sessions.service';
import { TrainingModelsService } from './training-models.service';
import { TrainingOpsService } from './training-ops.service';

const IDEMPOTENCY = 'x-idempotency-key';

@Controller('api/v1')
export class TinkerApiController {
  constructor(
    private readonly sessions: SessionsService,
    private readonly models: TrainingModelsService,
    private readonly training: TrainingOpsService,
    private readonly samplers: SamplersService,
    private readonly futures: FuturesService,
    private readonly checkpoints: CheckpointsService,
  ) {}

  @Public()
  @Get('healthz')
  healthz(): { status: string } {
    return { status: 'ok' };
  }

  @Post('client/config')
  @HttpCode(200)
  clientConfig(@Body() body: unknown): Record<string, unknown> {
    return this.sessions.clientConfig(body);
  }

  @Post('client/dynamic_config')
  @HttpCode(200)
  dynamicConfig(): Record<string, unknown> {
    return this.sessions.dynamicConfig();
  }

  @Post('create_session')
  @HttpCode(200)
  createSession(@Body() body: unknown, @Headers(IDEMPOTENCY) key?: string): Promise<unknown> {
    return this.sessions.createSession(body, key);
  }

  @Post('session_heartbeat')
  @HttpCode(200)
  heartbeat(@Body() body: unknown): Record<string, unknown> {
    return this.sessions.heartbeat(body);
  }

  @Post('telemetry')
  @HttpCode(200)
  telemetry(): { status: string } {
    return { status: 'accepted' };
  }

  @Post('create_model')
  @HttpCode(200)
  createModel(@Body() body: unknown, @Headers(IDEMPOTENCY) key?: string): Promise<unknown> {
    return this.models.createModel(body, key);
  }

  @Post('get_info')
  @HttpCode(200)
  getInfo(@Body() body: unknown): Record<string, unknown> {
    return this.models.getInfo(body);
  }

  @Post('forward_backward')
  @HttpCode(200)
  forwardBackward(@Body() body: unknown, @Headers(IDEMPOTENCY) key?: string): Promise<unknown> {
    return this.training.forwardBackward(body, key);
  }

  @Post('forward')
  @HttpCode(200)
  forward(@Body() body: unknown, @Headers(IDEMPOTENCY) key?: string): Promise<unknown> {
    return this.training.forward(body, key);
  }

  @Get('get_server_capabilities')
  getServerCapabilities(): Promise<Record<string, unknown>> {
    return this.checkpoints.getServerCapabilities();
  }

  /**
   * The SDK's get_checkpoint_archive_url: a 302 to a signed URL of the checkpoint's archive (the service's current
   * contract; the SDK also takes 200 {url, expires}), with Expires.
   */
  @Get('training_runs/:runId/checkpoints/:kind/:name/archive')
  checkpointArchive(@Param('runId') runId: string, @Param('kind') kind: string, @Param('name') name: string, @Req() req: Request, @Res() res: Response): void {
    const { location, expires } = this.checkpoints.checkpointArchiveUrl(runId, kind, name, req.originalUrl, `${req.protocol}://${req.headers.host ?? '127.0.0.1'}`);
    res.status(302).set({ Location: location, Expires: expires.toUTCString() }).end();
  }

  /** The archive behind a signed URL: public (the URL is the credential, as a signed storage URL), for 15 minutes. */
  @Public()
  @Get('archives/:token')
  async archiveDownload(@Param('token') token: string): Promise<StreamableFile> {
    const bytes = await this.checkpoints.archiveBytes(token);
    return new StreamableFile(Buffer.from(bytes), { type: 'application/x-tar', length: bytes.byteLength });
  }

  @Post('weights_info')
  @HttpCode(200)
  weightsInfo(@Body() body: unknown): Record<string, unknown> {
    return this.checkpoints.weightsInfo(body);
  }

  @Post('optim_step')
  @HttpCode(200)
  optimStep(@Body() body: unknown, @Headers(IDEMPOTENCY) key?: string): Promise<unknown> {
    return this.training.optimStep(body, key);
  }

  @Post('save_weights')
  @HttpCode(200)
  saveWeights(@Body() body: unknown, @Headers(IDEMPOTENCY) key?: string): Promise<unknown> {
    return this.training.saveWeights(body, key);
  }

  @Post('load_weights')
  @HttpCode(200)
  loadWeights(@Body() body: unknown, @Headers(IDEMPOTENCY) key?: string): Promise<unknown> {
    return this.training.loadWeights(body, key);
  }

  @Post('save_weights_for_sampler')
  @HttpCode(200)
  saveWeightsForSampler(@Body() body: unknown, @Headers(IDEMPOTENCY) key?: string): Promise<unknown> {
    return this.training.saveWeightsForSampler(body, key);
  }

  @Post('unload_model')
  @HttpCode(200)
  unloadModel(@Body() body: unknown, @Headers(IDEMPOTENCY) key?: string): Promise<unknown> {
    return this.models.unloadModel(body, key);
  }

  @Post('create_sampling_session')
  @HttpCode(200)
  createSamplingSession(@Body() body: unknown, @Headers(IDEMPOTENCY) key?: string): Promise<unknown> {
    return this.samplers.createSamplingSession(body, key);
  }

  @Get('samplers/:id')
  getSampler(@Param('id') id: string): Record<string, unknown> {
    return this.samplers.getSampler(id);
  }

  @Post('asample')
  @HttpCode(200)
  asample(@Body() body: unknown, @Headers(IDEMPOTENCY) key?: string): Promise<unknown> {
    return this.samplers.asample(body, key);
  }

  @Post('retrieve_future')
  @HttpCode(200)
  async retrieveFuture(@Body() body: unknown, @Headers('accept') accept?: string): Promise<unknown> {
    const answer = await this.futures.retrieveFuture(body, (accept ?? '').includes(PROTOBUF_CONTENT_TYPE));
    if ('protobuf' in answer) return new StreamableFile(Buffer.from(answer.protobuf), { type: PROTOBUF_CONTENT_TYPE });
    return answer.json;
  }
}
