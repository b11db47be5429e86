// A tiny GSM8K-shaped fixture for unit tests (hand-written problems, not from the dataset), and a local HTTP server
// that answers like the Hugging Face datasets-server rows API, with faults to inject.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RawGsm8kRow {
  question: string;
  answer: string;
}

export const TINY_GSM8K: Record<'train' | 'test', RawGsm8kRow[]> = {
  train: [
    { question: 'Mia has 3 boxes of 12 pencils. She gives away 5 pencils. How many pencils does she have left?', answer: 'She has 3*12 = <<3*12=36>>36 pencils.\nShe has 36-5 = <<36-5=31>>31 left.\n#### 31' },
    { question: 'A café sells a muffin for $2 and a coffee for $3. What do 4 muffins and 2 coffees cost?', answer: 'Muffins cost 4*2 = $<<4*2=8>>8.\nCoffees cost 2*3 = $<<2*3=6>>6.\nTogether 8+6 = $<<8+6=14>>14.\n#### 14' },
    { question: 'Tom reads 15 pages a day. How many days does he need for a 120-page book?', answer: 'He needs 120/15 = <<120/15=8>>8 days.\n#### 8' },
    { question: 'A "big" bag holds 2,500 grams of rice. How many 250-gram portions is that?', answer: '2,500/250 = <<2500/250=10>>10 portions.\n#### 10' },
    { question: 'Ann walks 1.5 km to school and back each day. How far does she walk in 5 days?', answer: 'Each day 1.5*2 = <<1.5*2=3>>3 km.\nIn 5 days 3*5 = <<3*5=15>>15 km.\n#### 15' },
    { question: 'There are 7 rows of 9 chairs and 4 chairs are broken. How many chairs can be used?', answer: '7*9 = <<7*9=63>>63 chairs.\n63-4 = <<63-4=59>>59.\n#### 59' },
    { question: 'A shop had 40 apples, sold 3/4 of them and got 6 more. How many apples are there now?', answer: 'It sold 40*3/4 = <<40*3/4=30>>30.\n40-30+6 = <<40-30+6=16>>16.\n#### 16' },
  ],
  test: [
    { question: 'Zoe has 8 stickers and buys 3 packs of 5. How many stickers does she have?', answer: '3*5 = <<3*5=15>>15.\n8+15 = <<8+15=23>>23.\n#### 23' },
    { question: 'A train travels 60 km an hour for 2.5 hours. How far does it go?', answer: '60*2.5 = <<60*2.5=150>>150 km.\n#### 150' },
    { question: 'Leo splits 45 marbles equally among 5 friends. How many does each get?', answer: '45/5 = <<45/5=9>>9.\n#### 9' },
  ],
};

export interface RowsServer {
  url: string;
  /** every request's path and query, in arrival order */
  requests: string[];
  close(): Promise<void>;
}

export interface RowsServerOptions {
  data: Record<'train' | 'test', RawGsm8kRow[]>;
  /** called before answering; return true when it answered (a fault) */
  fault?: (req: IncomingMessage, res: ServerResponse, n: number) => boolean;
}

/** Serves GET /rows?dataset=openai/gsm8k&config=main&split=…&offset=…&length=… like datasets-server. */
export async function startRowsServer(opts: RowsServerOptions): Promise<RowsServer> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(req.url ?? '');
    if (opts.fault?.(req, res, requests.length)) return;
    const url = new URL(req.url ?? '/', 'http://localhost');
    const split = url.searchParams.get('split');
    const send = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (url.pathname !== '/rows') return send(404, { error: 'Not Found' });
    if (url.searchParams.get('dataset') !== 'openai/gsm8k' || url.searchParams.get('config') !== 'main' || (split !== 'train' && split !== 'test')) {
      return send(404, { error: "The dataset does not exist, or is not accessible without authentication" });
    }
    const offset = Number(url.searchParams.get('offset') ?? 0);
    const length = Number(url.searchParams.get('length') ?? 100);
    if (!(length >= 1 && length <= 100)) return send(422, { error: "Parameter 'length' must be between 1 and 100" });
    const all = opts.data[split];
    const rows = all.slice(offset, offset + length).map((row, k) => ({ row_idx: offset + k, row, truncated_cells: [] }));
    send(200, {
      features: [
        { feature_idx: 0, name: 'question', type: { dtype: 'string', _type: 'Value' } },
        { feature_idx: 1, name: 'answer', type: { dtype: 'string', _type: 'Value' } },
      ],
      rows,
      num_rows_total: all.length,
      num_rows_per_page: 100,
      partial: false,
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
