// Memory sizes as docker compose, Redis and Kubernetes write them (768mb, 1g, 512m, 1Gi, 2048Mi, plain bytes),
// in bytes, binary multiples throughout (what each of them means by m/g/Mi/Gi); NaN for anything else.
export function byteSize(size: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([kmg]?)(i?b?)$/i.exec(size.trim());
  if (!m) return Number.NaN;
  return Number(m[1]) * 1024 ** ['', 'k', 'm', 'g'].indexOf(m[2].toLowerCase());
}
