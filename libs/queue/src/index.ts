// BullMQ and Redis behind the pipeline's interfaces: the queue repository, the connection factory, the Redis
// rollout-window store and step ledger, the consumer registry, and a service's edges as BullMQ workers.
export * from './consumer-registry';
export * from './edge-workers';
export * from './queue.repository';
export * from './redis-connection.factory';
export * from './redis-rollout-window.store';
export * from './redis-trainer-step.ledger';
