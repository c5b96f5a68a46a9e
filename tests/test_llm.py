"""The LLM/VLM protocol: parsing, validation, re-asking, and every backend for real.

``OpenAICompatible`` talks to a real HTTP server process (tests/openai_stub_server.py);
``TransformersVLM`` loads a tiny random Qwen2.5-VL from a folder through the same
``from_pretrained`` code a hub id goes through.
"""

from __future__ import annotations

import base64
import io
import json
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from agent.actions import PLAN_SCHEMA, parse_actions
from agent.brain.llm import RuleBased, get_llm
from agent.brain.prompts import planner_user
from pipelines.config import Settings
from pipelines.llm import (
    AnswerError,
    EndpointDown,
    LLMError,
    OpenAICompatible,
    TransformersVLM,
    describe,
    extract_json,
    image_data_url,
    validate_answer,
)
from tests.openai_stub_server import running_stub

SCHEMA = {"type": "object", "properties": {"score": {"type": "number", "minimum": 0,
                                                     "maximum": 10},
                                           "fix": {"type": "array", "items": {"type": "string"}}},
          "required": ["score", "fix"]}


@pytest.fixture(scope="module")
def stub():
    with running_stub() as client:
        yield client


@pytest.fixture()
def server(stub):
    stub.reset()
    return stub


def _client(server, **kw) -> OpenAICompatible:
    kw = {"timeout": 2.0, "backoff": 0.01, "backoff_max": 0.05, **kw}
    return OpenAICompatible(server.url, "stub-model", "sk-test", **kw)


# --- parsing and validation ----------------------------------------------------------

@pytest.mark.parametrize("text", [
    '{"score": 7, "fix": []}',
    'Sure! Here it is:\n```json\n{"score": 7, "fix": []}\n```',
    'noise {broken {"score": 7, "fix": []} trailing',
])
def test_extract_json_finds_the_object(text):
    assert extract_json(text) == {"score": 7, "fix": []}


@pytest.mark.parametrize("text", ["", "   ", "no json here", "[1, 2]", '{"a": '])
def test_extract_json_rejects_non_objects(text):
    with pytest.raises(AnswerError):
        extract_json(text)


def test_validation_error_names_the_path_and_problem():
    with pytest.raises(AnswerError) as err:
        validate_answer({"score": 12, "fix": "x"}, SCHEMA)
    msg = str(err.value)
    assert "score" in msg and "12" in msg and "fix" in msg


# --- OpenAI-compatible endpoint --------------------------------------------------------

def test_valid_answer_passes_first_time_with_key_and_model(server):
    server.script({"content": '{"score": 8, "fix": []}'})
    out = _client(server).complete_json("judge", [{"role": "user", "content": "hi"}], None,
                                        SCHEMA)
    assert out == {"score": 8, "fix": []}
    (req,) = server.requests()
    assert req["headers"]["Authorization"] == "Bearer sk-test"
    body = req["body"]
    assert body["model"] == "stub-model" and body["messages"][0]["role"] == "system"
    assert '"required":["score","fix"]' in body["messages"][0]["content"]


def test_malformed_then_wrong_schema_then_valid_feeds_errors_back(server):
    server.script({"content": "I think the score is {score: 8"},
                  {"content": '{"score": "high", "fix": []}'},
                  {"content": '{"score": 6, "fix": ["more"]}'})
    out = _client(server).complete_json("judge", [{"role": "user", "content": "hi"}], None,
                                        SCHEMA)
    assert out["score"] == 6
    reqs = server.requests()
    assert len(reqs) == 3
    second = reqs[1]["body"]["messages"]
    assert second[-2] == {"role": "assistant", "content": "I think the score is {score: 8"}
    assert "rejected" in second[-1]["content"] and "JSON" in second[-1]["content"]
    third = reqs[2]["body"]["messages"][-1]["content"]
    assert "score" in third and "'high'" in third


def test_invalid_every_time_raises_a_clear_error(server):
    server.script(*[{"content": '{"score": 99, "fix": []}'}] * 3)
    with pytest.raises(LLMError) as err:
        _client(server, attempts=3).complete_json("judge", [{"role": "user", "content": "x"}],
                                                  None, SCHEMA)
    assert "3 attempts" in str(err.value) and "99" in str(err.value)
    assert len(server.requests()) == 3


def test_server_errors_and_rate_limits_are_retried_with_backoff(server):
    server.script({"status": 500}, {"status": 429, "headers": {"Retry-After": "0"}},
                  {"status": 503}, {"content": '{"score": 5, "fix": []}'})
    out = _client(server, http_retries=4).complete_json("j", [{"role": "user", "content": "x"}],
                                                        None, SCHEMA)
    assert out["score"] == 5 and len(server.requests()) == 4


def test_persistent_server_error_gives_up_clearly(server):
    server.script(*[{"status": 502}] * 3)
    with pytest.raises(LLMError, match="HTTP 502"):
        _client(server, http_retries=3).complete_json("j", [{"role": "user", "content": "x"}],
                                                      None, SCHEMA)


def test_client_errors_are_not_retried(server):
    server.script({"status": 401, "error": "bad key"})
    with pytest.raises(LLMError, match="401"):
        _client(server).complete_json("j", [{"role": "user", "content": "x"}], None, SCHEMA)
    assert len(server.requests()) == 1


def test_slow_answer_times_out_then_retries(server):
    server.script({"content": '{"score": 1, "fix": []}', "delay": 1.5},
                  {"content": '{"score": 2, "fix": []}'})
    t = time.perf_counter()
    out = _client(server, timeout=0.5).complete_json("j", [{"role": "user", "content": "x"}],
                                                     None, SCHEMA)
    assert out["score"] == 2
    assert time.perf_counter() - t < 1.5  # did not wait for the slow answer


def test_unreachable_endpoint_fails_at_once_and_opens_the_circuit():
    client = OpenAICompatible("http://127.0.0.1:9/v1", "m", timeout=0.5, http_retries=4,
                              backoff=1.0, cooldown_s=60)
    t = time.perf_counter()
    with pytest.raises(LLMError, match="unreachable") as err:
        client.complete_json("j", [{"role": "user", "content": "x"}], None, SCHEMA)
    assert time.perf_counter() - t < 0.9  # no backoff on a connection that cannot be made
    assert "embedded fallback" in str(err.value)
    again = OpenAICompatible("http://127.0.0.1:9/v1", "m", cooldown_s=60)  # shared breaker
    t = time.perf_counter()
    with pytest.raises(EndpointDown, match="unavailable"):
        again.complete_json("j", [{"role": "user", "content": "x"}], None, SCHEMA)
    assert time.perf_counter() - t < 0.05
    assert "unavailable; embedded fallback for 60 s" in describe(again)


def test_a_server_that_never_answers_costs_the_connect_timeout_once():
    import socket

    with socket.socket() as silent:  # accepts connections (backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
        client = OpenAICompatible(url, "m", timeout=30, connect_timeout=0.5, cooldown_s=60)
        t = time.perf_counter()
        with pytest.raises(LLMError, match="unreachable"):
            client.complete_json("j", [{"role": "user", "content": "x"}], None, SCHEMA)
        assert time.perf_counter() - t < 1.5  # not the 30 s read timeout
        with pytest.raises(EndpointDown):
            client.complete_json("j", [{"role": "user", "content": "x"}], None, SCHEMA)


def test_response_format_refusal_is_retried_without_it(server):
    server.script({"status": 400, "error": "response_format is not supported"},
                  {"content": '{"score": 3, "fix": []}'})
    out = _client(server).complete_json("j", [{"role": "user", "content": "x"}], None, SCHEMA)
    assert out["score"] == 3
    first, second = (r["body"] for r in server.requests())
    assert "response_format" in first and "response_format" not in second


def test_garbled_http_body_is_retried(server):
    server.script({"body": "<html>oops</html>"}, {"content": '{"score": 4, "fix": []}'})
    out = _client(server).complete_json("j", [{"role": "user", "content": "x"}], None, SCHEMA)
    assert out["score"] == 4


def test_images_travel_as_png_data_urls(server, astronaut):
    server.script({"content": '{"score": 9, "fix": []}'})
    rgba = np.dstack([astronaut[:64, :80], np.full((64, 80), 255, np.uint8)])
    _client(server).complete_json("j", [{"role": "user", "content": "look"}],
                                  [astronaut, rgba], SCHEMA)
    content = server.requests()[0]["body"]["messages"][-1]["content"]
    assert content[0] == {"type": "text", "text": "look"}
    urls = [c["image_url"]["url"] for c in content[1:]]
    assert len(urls) == 2 and all(u.startswith("data:image/png;base64,") for u in urls)
    second = Image.open(io.BytesIO(base64.b64decode(urls[1].split(",", 1)[1])))
    assert second.size == (80, 64) and second.mode == "RGB"
    assert np.array_equal(np.asarray(second), astronaut[:64, :80])


def test_data_url_downscales_big_images():
    big = np.zeros((3000, 1500, 3), np.uint8)
    url = image_data_url(big, max_side=512)
    img = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
    assert max(img.size) == 512


def test_extra_check_errors_are_fed_back(server):
    bad = {"actions": [{"kind": "adjust", "operation": "brightness", "params": {"amount": 5}}]}
    good = {"actions": [{"kind": "adjust", "operation": "brightness",
                         "params": {"amount": 0.3}}]}
    server.script({"content": json.dumps(bad)}, {"content": json.dumps(good)})
    out = _client(server).complete_json("plan", [{"role": "user", "content": "x"}], None,
                                        PLAN_SCHEMA, check=lambda d: parse_actions(d))
    assert out == good
    feedback = server.requests()[1]["body"]["messages"][-1]["content"]
    assert "out of range" in feedback


# --- rule-based and the factory -------------------------------------------------------

def test_rule_based_backend_plans_through_the_protocol():
    out = RuleBased().complete_json("", [{"role": "user", "content": "make the car red"}],
                                    None, PLAN_SCHEMA)
    (action,) = parse_actions(out)
    assert action.operation == "recolor" and action.params["color"] == "red"
    with pytest.raises(LLMError, match="only plans"):
        RuleBased().complete_json("", [{"role": "user", "content": "x"}], None, SCHEMA)


def test_rule_based_backend_plans_the_request_not_the_as_typed_echo():
    """The planner's user turn carries the request and, when the front end changed it, the
    words as typed; the rule backend must plan the request alone."""
    text = planner_user("make the car red", typed="make teh car red pls", has_mask=False,
                        image_size=(640, 480))
    assert "(as typed: <<<make teh car red pls>>>)" in text
    out = RuleBased().complete_json("", [{"role": "user", "content": text}], None, PLAN_SCHEMA)
    (action,) = parse_actions(out)
    assert action.operation == "recolor" and action.params["color"] == "red"
    assert action.target == "car"
    alone = planner_user("brighten the sky", has_mask=False)
    (action,) = parse_actions(RuleBased().complete_json(
        "", [{"role": "user", "content": alone}], None, PLAN_SCHEMA))
    assert action.target == "sky"


def test_get_llm_picks_the_configured_backend(tmp_path):
    assert isinstance(get_llm(Settings(models={"vlm": ""})), RuleBased)
    assert isinstance(get_llm(Settings(models={"vlm": "no/such-model-here"})), RuleBased)
    endpoint = get_llm(Settings(llm_base_url="http://127.0.0.1:1/v1", llm_model="m"))
    assert isinstance(endpoint, OpenAICompatible) and endpoint.model == "m"
    (tmp_path / "config.json").write_text("{}")
    assert isinstance(get_llm(Settings(models={"vlm": str(tmp_path)})), RuleBased)  # no weights
    (tmp_path / "model.safetensors").write_bytes(b"")
    assert isinstance(get_llm(Settings(models={"vlm": str(tmp_path)})), TransformersVLM)
    with pytest.raises(ValueError, match="http"):
        OpenAICompatible("ftp://x", "m")


# --- tiny Qwen2.5-VL through transformers -----------------------------------------------

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>",
            "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]
TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{% if m['content'] is string %}"
    "{{ m['content'] }}{% else %}{% for c in m['content'] %}{% if c['type'] == 'image' %}"
    "<|vision_start|><|image_pad|><|vision_end|>{% else %}{{ c['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def build_tiny_qwen_vl(folder: Path) -> Path:
    """A ~30k-parameter random Qwen2.5-VL with a character-level tokenizer, saved."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import (
        PreTrainedTokenizerFast,
        Qwen2_5_VLConfig,
        Qwen2_5_VLForConditionalGeneration,
        Qwen2VLImageProcessor,
    )

    vocab = {t: i for i, t in enumerate(SPECIALS + [chr(c) for c in range(32, 127)] + ["\n"])}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<|endoftext|>"))
    tok.pre_tokenizer = pre_tokenizers.Split("", "isolated")
    tok.decoder = decoders.Fuse()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>",
                                        pad_token="<|endoftext|>",
                                        additional_special_tokens=SPECIALS[1:])
    tokenizer.chat_template = TEMPLATE
    ids = {t: vocab[t] for t in SPECIALS}
    config = Qwen2_5_VLConfig(
        text_config=dict(vocab_size=len(vocab), hidden_size=16, intermediate_size=32,
                         num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
                         max_position_embeddings=4096, bos_token_id=ids["<|im_start|>"],
                         eos_token_id=ids["<|im_end|>"], pad_token_id=ids["<|endoftext|>"],
                         rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                          "mrope_section": [1, 1, 2]}),
        vision_config=dict(depth=1, hidden_size=16, intermediate_size=32, num_heads=2,
                           out_hidden_size=16, patch_size=14, spatial_merge_size=2,
                           temporal_patch_size=2, window_size=56, fullatt_block_indexes=[0]),
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"])
    torch.manual_seed(0)
    Qwen2_5_VLForConditionalGeneration(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    Qwen2VLImageProcessor(min_pixels=56 * 56, max_pixels=112 * 112, patch_size=14,
                          merge_size=2, temporal_patch_size=2).save_pretrained(folder)
    (folder / "chat_template.jinja").write_text(TEMPLATE)
    return folder


def build_tiny_qwen3_vl(folder: Path) -> Path:
    """The same tokenizer and template with a ~44k-parameter random Qwen3-VL."""
    import torch
    from transformers import Qwen2VLImageProcessor, Qwen3VLConfig, Qwen3VLForConditionalGeneration

    build_tiny_qwen_vl(folder)  # tokenizer, template (the Qwen2.5 weights are replaced)
    vocab_size = len(SPECIALS) + 96
    ids = {t: i for i, t in enumerate(SPECIALS)}
    config = Qwen3VLConfig(
        text_config=dict(vocab_size=vocab_size, hidden_size=16, intermediate_size=32,
                         num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
                         head_dim=8, max_position_embeddings=4096,
                         bos_token_id=ids["<|im_start|>"], eos_token_id=ids["<|im_end|>"],
                         pad_token_id=ids["<|endoftext|>"],
                         rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                          "mrope_section": [1, 1, 2],
                                          "mrope_interleaved": True}),
        vision_config=dict(depth=1, hidden_size=16, intermediate_size=32, num_heads=2,
                           out_hidden_size=16, patch_size=16, spatial_merge_size=2,
                           temporal_patch_size=2, deepstack_visual_indexes=[0],
                           num_position_embeddings=64),
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"])
    torch.manual_seed(0)
    for old in folder.glob("*.safetensors"):
        old.unlink()
    Qwen3VLForConditionalGeneration(config).save_pretrained(folder)
    Qwen2VLImageProcessor(min_pixels=64 * 64, max_pixels=128 * 128, patch_size=16,
                          merge_size=2, temporal_patch_size=2).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny_vlm(tmp_path_factory) -> Path:
    return build_tiny_qwen_vl(tmp_path_factory.mktemp("tiny-qwen-vl"))


def _forcing(answer: str, folder: Path):
    """A logits processor that makes the model write ``answer`` then stop (real generate)."""
    import torch
    from transformers import AutoTokenizer, LogitsProcessor, LogitsProcessorList

    tok = AutoTokenizer.from_pretrained(folder)
    target = tok(answer, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]

    class Force(LogitsProcessor):
        def __init__(self) -> None:
            self.start, self.last = 0, -1

        def __call__(self, input_ids, scores):
            if input_ids.shape[1] != self.last + 1:  # a new generate call
                self.start = input_ids.shape[1]
            self.last = input_ids.shape[1]
            step = min(input_ids.shape[1] - self.start, len(target) - 1)
            out = torch.full_like(scores, -float("inf"))
            out[:, target[step]] = 0.0
            return out

    return {"logits_processor": LogitsProcessorList([Force()])}


def test_tiny_vlm_garbage_is_rejected_after_retries(tiny_vlm, astronaut):
    vlm = TransformersVLM(str(tiny_vlm), device="cpu", max_new_tokens=24, attempts=2)
    with pytest.raises(LLMError) as err:
        vlm.complete_json("judge the edit", [{"role": "user", "content": "score it"}],
                          [astronaut], SCHEMA)
    assert "transformers-vlm gave no valid answer after 2 attempts" in str(err.value)
    assert "JSON" in str(err.value)


@pytest.mark.parametrize("processor", ["auto", "image-only"])
def test_tiny_vlm_constrained_answer_passes_validation(tiny_vlm, astronaut, processor):
    answer = '{"score": 7, "fix": ["a"]}'
    vlm = TransformersVLM(str(tiny_vlm), device="cpu", max_new_tokens=40, attempts=1,
                          processor=processor, generate_kwargs=_forcing(answer, tiny_vlm))
    out = vlm.complete_json("judge", [{"role": "user", "content": "score it"}],
                            [astronaut, astronaut[:100, :50]], SCHEMA)
    assert out == {"score": 7, "fix": ["a"]}
    if processor == "image-only":
        assert type(vlm._processor).__name__ == "ImageOnlyProcessor"


def test_tiny_vlm_missing_folder_fails_clearly(tmp_path):
    vlm = TransformersVLM(str(tmp_path / "nothing"), device="cpu")
    with pytest.raises(LLMError, match="cannot load the VLM"):
        vlm.complete_json("s", [{"role": "user", "content": "x"}], None, SCHEMA)


def test_tiny_vlm_serves_the_planner_and_the_critic_panel(tiny_vlm, astronaut):
    from agent.brain.critic import MeasuredCritic, PanelCritic
    from agent.brain.planner import LLMPlanner

    plan_json = '{"is_edit":true,"actions":[{"kind":"adjust","operation":"sharpen"}]}'
    planner = LLMPlanner(TransformersVLM(str(tiny_vlm), device="cpu", max_new_tokens=80,
                                         attempts=1,
                                         generate_kwargs=_forcing(plan_json, tiny_vlm)))
    (action,) = planner.plan("make it crisper", image=astronaut[:64, :64]).actions
    assert action.operation == "sharpen" and action.params["amount"] == 0.6

    review = '{"score":7.5,"keep":["ok"],"fix":[]}'
    panel = PanelCritic(TransformersVLM(str(tiny_vlm), device="cpu", max_new_tokens=40,
                                        attempts=1, generate_kwargs=_forcing(review, tiny_vlm)),
                        focuses=("instruction", "artefacts"))
    before = astronaut[:64, :64]
    after = np.clip(before.astype(np.int16) + 20, 0, 255).astype(np.uint8)
    crit = panel.critique(before, after, action, np.ones((64, 64), bool))
    measured = MeasuredCritic().critique(before, after, action, np.ones((64, 64), bool))
    # the experts and the aggregator all say 7.5; the final score averages that with the
    # measured one (a brightening sold as sharpening measures 2/10), never ignoring it
    assert measured.score == 2.0 and all(measured.checks.values())
    assert (crit.score, crit.keep) == (pytest.approx(0.5 * (7.5 + 2.0)), ["ok"])

    # random weights, unconstrained: garbage is rejected and the panel falls back
    garbage = TransformersVLM(str(tiny_vlm), device="cpu", max_new_tokens=4, attempts=1)
    crit = PanelCritic(garbage, focuses=("artefacts",)).critique(before, after, action, None)
    assert crit.score == MeasuredCritic().critique(before, after, action, None).score
    assert any("measured only" in f for f in crit.fix)


@pytest.mark.parametrize("processor", ["auto", "image-only"])
def test_tiny_qwen3_vl_loads_through_the_same_code(tmp_path_factory, astronaut, processor):
    folder = tmp_path_factory.getbasetemp() / "tiny-qwen3-vl"
    if not (folder / "config.json").is_file():
        folder.mkdir(exist_ok=True)
        build_tiny_qwen3_vl(folder)
    assert json.loads((folder / "config.json").read_text())["model_type"] == "qwen3_vl"
    answer = '{"score": 6, "fix": []}'
    vlm = TransformersVLM(str(folder), device="cpu", max_new_tokens=30, attempts=1,
                          processor=processor, generate_kwargs=_forcing(answer, folder))
    out = vlm.complete_json("judge", [{"role": "user", "content": "x"}], [astronaut], SCHEMA)
    assert out == {"score": 6, "fix": []}
