"""Fine-tuning the packaged MiniLM with a head: the one training loop of the models hysem ships.

The span tagger and the findings model train the same way: seeded, single-process and
deterministic on the CPU; AdamW with linear warm-up and decay; items of similar length
batched together and batches in random order (less padding, the same mix); gradient norm
clipped at 1; progress every 20 steps. Each model gives its items, how long an item is and
the loss of a batch.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch


@dataclass(frozen=True)
class Schedule:
    """What the loop reads of a model's training settings, written beside its weights; each model's settings
    extend it and set their own defaults."""

    epochs: float = 3.0
    batch_size: int = 16
    learning_rate: float = 8e-5
    warmup: float = 0.06
    weight_decay: float = 0.01
    seed: int = 13
    threads: int = 2


def seeded(settings: Schedule) -> None:
    """Seed every generator and make torch deterministic on ``settings.threads`` threads: the same data gives
    the same weights on the same library versions."""
    random.seed(settings.seed)
    np.random.seed(settings.seed)
    torch.manual_seed(settings.seed)
    torch.set_num_threads(settings.threads)
    torch.use_deterministic_algorithms(True)


def fine_tune(
    model: torch.nn.Module,
    data: Sequence[Any],
    settings: Schedule,
    bucket: Callable[[Any], int],
    loss: Callable[[Sequence[Any]], torch.Tensor],
    progress: Callable[[str], None],
) -> int:
    """Train ``model`` on ``data`` for ``settings.epochs``; ``bucket`` groups items of similar length, ``loss``
    is a batch's loss. Returns the steps taken."""
    steps = math.ceil(len(data) / settings.batch_size * settings.epochs)
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.learning_rate, weight_decay=settings.weight_decay)
    warmup = max(1, int(steps * settings.warmup))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min((step + 1) / warmup, max(0.0, (steps - step) / max(1, steps - warmup)))
    )
    order = random.Random(settings.seed)
    model.train()
    started, step, losses = time.monotonic(), 0, []
    while step < steps:
        shuffled = sorted(order.sample(list(data), len(data)), key=bucket)
        batches = [shuffled[i : i + settings.batch_size] for i in range(0, len(shuffled), settings.batch_size)]
        order.shuffle(batches)
        for batch in batches:
            if step >= steps:
                break
            value = loss(batch)
            value.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad()
            losses.append(value.item())
            step += 1
            if step % 20 == 0 or step == steps:
                rate = step / (time.monotonic() - started)
                progress(
                    f"step {step}/{steps}  loss {np.mean(losses[-20:]):.4f}  "
                    f"{rate * 60:.1f} steps/min, {(steps - step) / rate / 60:.0f} min left"
                )
    return steps


def save(model: torch.nn.Module, target: Path, record: dict[str, Any]) -> Path:
    """The encoder (transformers format), the head (``head.pt``) and ``training.json`` (``record``) in ``target``."""
    target.mkdir(parents=True, exist_ok=True)
    model.encoder.save_pretrained(target)
    torch.save(model.head.state_dict(), target / "head.pt")
    (target / "training.json").write_text(json.dumps(record, indent=1))
    return target
