export * from './tfrecord';
export * from './event-messages';
export * from './event-file';
export * from './run-scalars';
export * from './tensorboard-export';
