"""A layout model with random weights, saved where Docling's standard pipeline looks for its own.

Docling resolves its layout model (RT-DETR v2 "heron") to ``<artifacts_path>/docling-project--
docling-layout-heron`` holding a Transformers ``config.json`` (whose ``id2label`` names must
be Docling item labels), the weights and a ``preprocessor_config.json``. This one is a few
hundred kilobytes, reads 64x64 page images, and its class heads are biased towards "text"
so that its random boxes come out as detections the pipeline must then post-process.
"""

from __future__ import annotations

from pathlib import Path

LAYOUT_FOLDER = "docling-project--docling-layout-heron"
LABELS = [
    "caption",
    "footnote",
    "formula",
    "list_item",
    "page_footer",
    "page_header",
    "picture",
    "section_header",
    "table",
    "text",
    "title",
]


def build_tiny_layout_model(artifacts: Path) -> Path:
    import torch
    from transformers import RTDetrImageProcessor, RTDetrResNetConfig, RTDetrV2Config, RTDetrV2ForObjectDetection

    backbone = RTDetrResNetConfig(
        embedding_size=8,
        hidden_sizes=[8, 16, 16, 32],
        depths=[1, 1, 1, 1],
        layer_type="basic",
        out_features=["stage2", "stage3", "stage4"],
        out_indices=[2, 3, 4],
    )
    config = RTDetrV2Config(
        backbone_config=backbone,
        use_pretrained_backbone=False,
        d_model=16,
        encoder_hidden_dim=16,
        encoder_in_channels=[16, 16, 32],
        encoder_ffn_dim=32,
        encoder_layers=1,
        encoder_attention_heads=2,
        decoder_in_channels=[16, 16, 16],
        decoder_ffn_dim=32,
        decoder_layers=2,
        decoder_attention_heads=2,
        decoder_n_points=2,
        num_feature_levels=3,
        num_queries=12,
        num_labels=len(LABELS),
        id2label=dict(enumerate(LABELS)),
        label2id={label: k for k, label in enumerate(LABELS)},
    )
    torch.manual_seed(0)
    model = RTDetrV2ForObjectDetection(config)
    with torch.no_grad():
        for head in model.class_embed:
            head.bias.fill_(-6.0)
            head.bias[LABELS.index("text")] = 6.0
    folder = artifacts / LAYOUT_FOLDER
    model.save_pretrained(folder)
    RTDetrImageProcessor(size={"height": 64, "width": 64}).save_pretrained(folder)
    return artifacts
