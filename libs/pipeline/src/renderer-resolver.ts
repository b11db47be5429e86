// How services find the Renderer of a payload's base model (plan.baseModel): libs/backend's rendererFor,
// memoised per base model (a Qwen renderer loads a tokenizer once).
import { rendererFor, type Renderer, type RendererOptions } from '@rx/backend';

export type RendererResolver = (baseModel: string) => Promise<Renderer>;

export function cachedRendererResolver(options: RendererOptions = {}, resolve: (baseModel: string, options: RendererOptions) => Promise<Renderer> = rendererFor): RendererResolver {
  const cache = new Map<string, Promise<Renderer>>();
  return (baseModel) => {
    let r = cache.get(baseModel);
    if (!r) {
      r = resolve(baseModel, options);
      cache.set(baseModel, r);
      r.catch(() => cache.delete(baseModel));
    }
    return r;
  };
}
