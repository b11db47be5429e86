// Local processes in one place: every child rx starts (services, the policy server, a private Redis, the
// controller) is launched here, with a lifeline that ends it when its parent ends, however the parent ends.
export { killAllChildren, launchChild, launchNodeChild, type ChildOptions, type NodeChildOptions } from './child-process';
export { freePort } from './free-port';
export { LIFELINE_FD_ENV, watchLifeline } from './lifeline';
export { startNodeProcess, startNodeProcesses, serviceFreeEnv, type NodeProcess, type NodeProcessOptions, type ProcessExit } from './node-process';
export { onPath } from './on-path';
export { PrivateRedisError, redisAnswers, redisServerOnPath, startPrivateRedis, type PrivateRedis, type PrivateRedisOptions } from './private-redis';
export { REPO_ROOT } from './repo-root';
export { ServiceStartError, ServiceSupervisor, tail, type RunningService, type ServiceSpec, type SupervisorOptions } from './service-supervisor';
