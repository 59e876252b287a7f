"""vLLM's engine inside the asset's process, for a GPU node that runs no model server.

vllm is an optional extra (it needs CUDA and pins its own torch), so it is imported only
when this backend is built. Concurrent requests are gathered into one ``LLM.chat`` batch:
the engine schedules a batch far better than one conversation at a time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from hysem_assets.llm.completion import Completion, LLMError, Message
from hysem_assets.settings.backends import BackendConfigError, GenerationParams, VllmInprocConfig

Schema = Mapping[str, Any]
_Request = tuple[list[Message], Schema | None, GenerationParams, "asyncio.Future[Completion]"]


def import_vllm() -> Any:
    """The vllm module, or an error that says how to get it or what to use instead."""
    try:
        import vllm
    except ImportError as exc:
        raise BackendConfigError(
            "The vllm_inproc backend needs the vllm package on a CUDA machine "
            "(pip install vllm, in an environment whose torch matches it). Without it, run "
            "`vllm serve` and use the `vllm` backend, which talks to the server over HTTP."
        ) from exc
    return vllm


class VllmInprocBackend:
    """Answers with an in-process ``vllm.LLM``; schemas become ``StructuredOutputsParams(json=...)``."""

    #: In this process: no server takes part in cache keys.
    server = ""

    def __init__(self, engine: Any, model: str):
        self._engine = engine
        self._model = model
        self._pending: list[_Request] = []
        self._worker: asyncio.Task[None] | None = None

    @property
    def model(self) -> str:
        return self._model

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: Schema | None = None,
        params: GenerationParams | None = None,
    ) -> Completion:
        future: asyncio.Future[Completion] = asyncio.get_running_loop().create_future()
        self._pending.append((list(messages), schema, params or GenerationParams(), future))
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        while self._pending:
            await asyncio.sleep(0)  # one loop turn, so requests issued together join the batch
            batch, self._pending = self._pending, []
            try:
                outputs = await asyncio.to_thread(self._generate, batch)
            except Exception as exc:  # the engine's errors are not ours to classify
                for *_, future in batch:
                    future.set_exception(LLMError(f"vLLM engine ({self._model}): {type(exc).__name__}: {exc}"))
                continue
            for (*_, future), output in zip(batch, outputs, strict=True):
                future.set_result(_completion(output))

    def _generate(self, batch: list[_Request]) -> list[Any]:
        from vllm import SamplingParams
        from vllm.sampling_params import StructuredOutputsParams

        sampling = [
            SamplingParams(
                temperature=params.temperature,
                max_tokens=params.max_tokens,
                top_p=params.top_p or 1.0,
                seed=params.seed,
                structured_outputs=StructuredOutputsParams(json=dict(schema)) if schema is not None else None,
            )
            for _, schema, params, _ in batch
        ]
        return self._engine.chat([messages for messages, *_ in batch], sampling, use_tqdm=False)

    async def aclose(self) -> None:
        """Nothing to release per loop; the engine keeps its GPU memory for the next call."""


def _completion(output: Any) -> Completion:
    generated = output.outputs[0]
    return Completion(
        text=generated.text,
        prompt_tokens=len(output.prompt_token_ids or ()),
        completion_tokens=len(generated.token_ids),
        finish_reason=generated.finish_reason,
    )


def from_config(config: VllmInprocConfig) -> VllmInprocBackend:
    """Load the model on the visible GPUs (CUDA_VISIBLE_DEVICES), split over tensor_parallel_size."""
    vllm = import_vllm()
    engine_args = {"max_model_len": config.max_model_len} if config.max_model_len else {}
    engine = vllm.LLM(
        model=config.model,
        tensor_parallel_size=config.tensor_parallel_size,
        gpu_memory_utilization=config.gpu_memory_utilization,
        **engine_args,
        **config.engine_args,
    )
    return VllmInprocBackend(engine, config.model)
