// The part of TensorBoard's Event protocol buffer (tensorboard/compat/proto/event.proto and summary.proto) that
// scalar summaries use, as protobufjs reflection: Event {wall_time = 1 double, step = 2 int64, oneof what
// {file_version = 3 string, summary = 5 Summary}}, Summary {repeated Value value = 1}, Summary.Value {tag = 1 string,
// oneof value {simple_value = 2 float}}. A scalar written as simple_value is what TensorBoard's scalar dashboard and
// its EventAccumulator read.
import protobuf from 'protobufjs';

const root = protobuf.Root.fromJSON({
  nested: {
    tensorboard: {
      nested: {
        Event: {
          oneofs: { what: { oneof: ['file_version', 'summary'] } },
          fields: {
            wall_time: { type: 'double', id: 1 },
            step: { type: 'int64', id: 2 },
            file_version: { type: 'string', id: 3 },
            summary: { type: 'Summary', id: 5 },
          },
        },
        Summary: {
          fields: { value: { rule: 'repeated', type: 'Value', id: 1 } },
          nested: {
            Value: {
              oneofs: { value: { oneof: ['simple_value'] } },
              fields: {
                tag: { type: 'string', id: 1 },
                simple_value: { type: 'float', id: 2 },
              },
            },
          },
        },
      },
    },
  },
});

export const EVENT_MESSAGE = root.lookupType('tensorboard.Event');

/** the version string of the first event of every event file */
export const EVENT_FILE_VERSION = 'brain.Event:2';

export interface ScalarValue {
  tag: string;
  value: number;
}

/** the encoded Event of one step's scalars */
export function encodeScalarEvent(wallTime: number, step: number, values: readonly ScalarValue[]): Uint8Array {
  const message = EVENT_MESSAGE.fromObject({ wall_time: wallTime, step, summary: { value: values.map((v) => ({ tag: v.tag, simple_value: v.value })) } });
  return EVENT_MESSAGE.encode(message).finish();
}

/** the encoded first Event of a file: its version */
export function encodeFileVersionEvent(wallTime: number): Uint8Array {
  return EVENT_MESSAGE.encode(EVENT_MESSAGE.fromObject({ wall_time: wallTime, step: 0, file_version: EVENT_FILE_VERSION })).finish();
}
