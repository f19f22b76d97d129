"""Images among the contexts: an LLM judge gets them as image parts, the local judge reads the text
contexts and says so when there are none, LlamaIndex's multi-modal evaluators and ImageNodes."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any, ClassVar

import pytest

import ragmeter
from helpers.server import FakeOpenAIServer
from ragmeter.evaluators import MultiModalFaithfulnessEvaluator, MultiModalRelevancyEvaluator
from ragmeter.run.images import image_url, is_image_ref

TEXT = "The Eiffel Tower was built between 1887 and 1889 for the World's Fair in Paris."
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


@pytest.fixture
def picture(tmp_path: Path) -> Path:
    path = tmp_path / "tower.png"
    path.write_bytes(PNG)
    return path


def test_what_an_image_context_is(picture: Path) -> None:
    assert is_image_ref(str(picture)) and is_image_ref("https://example.org/a/tower.JPG?size=2")
    assert is_image_ref("data:image/png;base64,iVBORw0KGgo=")
    assert (
        not is_image_ref(TEXT)
        and not is_image_ref("see figure tower.png\\nand more")
        and not is_image_ref("")
    )
    assert image_url(str(picture)) == "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert image_url("https://example.org/tower.jpg") == "https://example.org/tower.jpg"
    with pytest.raises(ragmeter.DatasetError, match="no such file"):
        image_url("missing/tower.png")


def test_the_local_judge_reads_the_text_and_says_when_there_is_none(picture: Path) -> None:
    rows = [
        {"question": "When was it built?", "answer": "It was built between 1887 and 1889.", "contexts": [TEXT, str(picture)]},
        {"question": "What does it look like?", "answer": "It is a lattice tower.", "contexts": [str(picture)]},
    ]  # fmt: skip
    result = ragmeter.evaluate(rows, ["faithfulness"], progress=False)
    with_text, only_images = result.scores("faithfulness")
    assert with_text is not None and with_text.value is not None and with_text.value > 0.5
    assert only_images is not None and only_images.value is None and only_images.error is not None
    assert only_images.error.kind == "ImagesOnlyError"
    assert (
        "1 image(s) and no text" in only_images.error.message and "reads images" in only_images.error.message
    )


def test_an_llm_judge_gets_the_images_as_image_parts(
    fake_openai_server: FakeOpenAIServer, picture: Path
) -> None:
    judge = ragmeter.make_judge("openai-compatible:fake-model", base_url=fake_openai_server.url)
    url = "https://example.org/figures/plan.jpg"
    row = {"question": "When was it built?", "answer": "It was built between 1887 and 1889.",
           "contexts": [TEXT, str(picture), url]}  # fmt: skip
    result = ragmeter.evaluate([row], ["faithfulness"], judge, progress=False)
    score = result.score(0, "faithfulness")
    assert score is not None and score.value is not None
    with_images = [r for r in fake_openai_server.requests if isinstance(r["messages"][-1]["content"], list)]
    assert with_images, "no request carried the images"
    parts = with_images[0]["messages"][-1]["content"]
    text = parts[0]["text"]
    assert "[image 1: tower.png]" in text and "[image 2: plan.jpg]" in text and str(picture) not in text
    urls = [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]
    assert urls == [image_url(str(picture)), url]
    # the sample without images: plain text content, as before
    plain = ragmeter.evaluate([{**row, "contexts": [TEXT]}], ["faithfulness"], judge, progress=False)
    assert plain.score(0, "faithfulness").value is not None  # type: ignore[union-attr]
    assert isinstance(fake_openai_server.requests[-1]["messages"][-1]["content"], str)


def test_llama_index_multimodal_evaluators(fake_openai_server: FakeOpenAIServer, picture: Path) -> None:
    local = MultiModalFaithfulnessEvaluator()
    seen = local.evaluate(query="When was it built?", response="It was built between 1887 and 1889.",
                          contexts=[TEXT], image_paths=[str(picture)])  # fmt: skip
    assert not seen.invalid_result and seen.score is not None
    blind = local.evaluate(query="What is it?", response="A tower.", image_paths=[str(picture)])
    assert blind.invalid_result and "reads images" in (blind.invalid_reason or "")
    judge = ragmeter.make_judge("openai-compatible:fake-model", base_url=fake_openai_server.url)
    llm = MultiModalRelevancyEvaluator(llm=judge)
    graded = llm.evaluate(query="When was it built?", response="Between 1887 and 1889.",
                          contexts=[TEXT], image_urls=["https://example.org/tower.png"])  # fmt: skip
    assert not graded.invalid_result
    body = fake_openai_server.requests[-1]["messages"][-1]["content"]
    assert isinstance(body, list) and body[-1]["image_url"]["url"] == "https://example.org/tower.png"
    assert ragmeter.metrics.get_metric("faithful_rate").name == "faithfulness"  # Ragas's multi-modal name


def test_a_llama_index_image_node_is_an_image_context(picture: Path) -> None:
    pytest.importorskip("llama_index.core")
    from llama_index.core.schema import ImageNode, NodeWithScore, TextNode

    from ragmeter.pipeline.outputs import normalize_output

    class Response:  # the shape of LlamaIndex's Response: text and source nodes
        response = "It was built between 1887 and 1889."
        source_nodes: ClassVar[list[Any]] = [
            NodeWithScore(node=TextNode(text=TEXT, id_="t1"), score=0.9),
            NodeWithScore(node=ImageNode(image_path=str(picture), id_="i1"), score=0.8),
            NodeWithScore(node=ImageNode(image=base64.b64encode(PNG).decode(), id_="i2"), score=0.7),
        ]

    out = normalize_output(Response())
    assert out.contexts[0] == TEXT and out.contexts[1] == str(picture)
    assert out.contexts[2].startswith("data:image/png;base64,") and list(out.context_ids or ()) == [
        "t1",
        "i1",
        "i2",
    ]
    assert all(is_image_ref(c) for c in out.contexts[1:])
