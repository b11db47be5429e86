export * from './event-file-reader';
export * from './python-event-accumulator';
