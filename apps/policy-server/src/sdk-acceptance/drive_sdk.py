"""Drives the official Tinker Python SDK against a Tinker-compatible server and prints one JSON line per call.

    PYTHONPATH=/usr/lib/python3/dist-packages:$RX_TINKER_SDK_SRC python3 drive_sdk.py <base_url>

Run by tinker-sdk.acceptance.ts against apps/policy-server (in-memory bigram model `rx-test/bigram`, vocabulary
32). Each line is {"call": name, "ok": bool, "detail": ...}; a failed call does not stop the ones after it.
The SDK is not part of rx: bring its source (github thinking-machines-lab/tinker) and its dependencies yourself.
"""
import json
import sys
import threading
import time
import traceback

import tinker
from tinker import types

BASE_MODEL = "rx-test/bigram"
base_url = sys.argv[1]
state = {}


def report(call, ok, detail):
    print(json.dumps({"call": call, "ok": ok, "detail": detail}), flush=True)


def step(call, timeout=60):
    def wrap(fn):
        result = {}

        def run():
            try:
                result["value"] = fn()
            except BaseException as e:  # noqa: BLE001 - every failure is reported, not raised
                result["error"] = f"{type(e).__name__}: {e} | {traceback.format_exc(limit=3)[-600:]}"

        t = threading.Thread(target=run, daemon=True)
        t.start()
        t.join(timeout)
        if t.is_alive():
            report(call, False, f"no answer within {timeout} s")
        elif "error" in result:
            report(call, False, result["error"])
        else:
            report(call, True, result.get("value"))
        return fn

    return wrap


def datum(tokens, advantage):
    # position i predicts token i+1; the first target carries no advantage (a one-token prompt)
    inputs, targets = tokens[:-1], tokens[1:]
    n = len(targets)
    return types.Datum(
        model_input=types.ModelInput.from_ints(inputs),
        loss_fn_inputs={
            "target_tokens": types.TensorData(data=targets, dtype="int64", shape=[n]),
            "logprobs": types.TensorData(data=[0.0] + [-3.0] * (n - 1), dtype="float32", shape=[n]),
            "advantages": types.TensorData(data=[0.0] + [advantage] * (n - 1), dtype="float32", shape=[n]),
        },
    )


DATA = [datum([1, 2, 3, 4, 5], 1.0), datum([3, 4, 5], -0.5), datum([7, 8, 9, 10], 0.25), datum([2, 2, 2], 1.5), datum([5, 6], 0.0)]
ADAM = types.AdamParams(learning_rate=1e-2)

sc = tinker.ServiceClient(base_url=base_url, api_key="tml-rx-local-acceptance")


@step("get_server_capabilities")
def _():
    caps = sc.get_server_capabilities()
    names = [m.model_name for m in caps.supported_models]
    assert BASE_MODEL in names, names
    return names


@step("create_lora_training_client")
def _():
    state["tc"] = sc.create_lora_training_client(base_model=BASE_MODEL, rank=2)
    return state["tc"].model_id


@step("forward_backward(importance_sampling) in several chunks")
def _():
    out = state["tc"].forward_backward(DATA, "importance_sampling").result()
    lens = [len(o["logprobs"].tolist()) for o in out.loss_fn_outputs]
    assert lens == [4, 2, 3, 2, 1], lens
    assert "loss:sum" in out.metrics, out.metrics
    return {"loss:sum": out.metrics["loss:sum"], "lengths": lens}


@step("optim_step")
def _():
    return state["tc"].optim_step(ADAM).result().metrics


@step("save_weights_for_sampler")
def _():
    state["sampler_path"] = state["tc"].save_weights_for_sampler("acc-sampler").result().path
    return state["sampler_path"]


@step("save_weights_and_get_sampling_client")
def _():
    s = state["tc"].save_weights_and_get_sampling_client()
    r = s.sample(prompt=types.ModelInput.from_ints([1, 2]), num_samples=1, sampling_params=types.SamplingParams(max_tokens=3, temperature=1.0, seed=3)).result()
    return [list(map(int, q.tokens)) for q in r.sequences]


@step("create_sampling_client(model_path)")
def _():
    state["sampler"] = sc.create_sampling_client(model_path=state["sampler_path"])
    return True


@step("sample with prompt logprobs")
def _():
    r = state["sampler"].sample(
        prompt=types.ModelInput.from_ints([1, 2, 3]),
        num_samples=2,
        sampling_params=types.SamplingParams(max_tokens=4, temperature=1.0, seed=7),
        include_prompt_logprobs=True,
    ).result()
    assert len(r.sequences) == 2
    assert r.prompt_logprobs[0] is None and len(r.prompt_logprobs) == 3, r.prompt_logprobs
    for q in r.sequences:
        assert len(q.logprobs) == len(q.tokens) > 0
    return {"prompt_logprobs": r.prompt_logprobs, "tokens": [list(map(int, q.tokens)) for q in r.sequences]}


@step("compute_logprobs")
def _():
    lp = state["sampler"].compute_logprobs(types.ModelInput.from_ints([4, 5, 6, 7])).result()
    assert lp[0] is None and len(lp) == 4, lp
    return lp


@step("save_state")
def _():
    state["state_path"] = state["tc"].save_state("acc-state").result().path
    return state["state_path"]


@step("load_state")
def _():
    return state["tc"].load_state(state["state_path"]).result().path


@step("load_state_with_optimizer")
def _():
    return state["tc"].load_state_with_optimizer(state["state_path"]).result().path


@step("create_training_client_from_state")
def _():
    tc = sc.create_training_client_from_state(state["state_path"])
    return tc.model_id


@step("create_training_client_from_state_with_optimizer")
def _():
    tc = sc.create_training_client_from_state_with_optimizer(state["state_path"])
    out = tc.forward_backward(DATA[:2], "importance_sampling").result()
    return out.metrics


@step("forward")
def _():
    out = state["tc"].forward(DATA, "importance_sampling").result()
    return [len(o["logprobs"].tolist()) for o in out.loss_fn_outputs]


@step("a training call after a refused one")
def _():
    try:
        state["tc"].forward_backward(DATA[:1], "ppo").result()
        raise AssertionError("the server took loss_fn ppo, which it does not support")
    except AssertionError:
        raise
    except Exception as e:  # noqa: BLE001 - the refusal is expected
        refused = f"{type(e).__name__}"
    started = time.time()
    metrics = state["tc"].optim_step(ADAM).result().metrics
    return {"refused": refused, "next_call_s": round(time.time() - started, 3), "metrics": metrics}


report("version", True, tinker.__version__)
