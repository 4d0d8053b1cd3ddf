"""A forward hook that steers a random-weight model toward a script, so a test
can make it write what it needs; the masks still decide what may come."""

from __future__ import annotations

from typing import Any


class Steer:
    """Biases the model toward writing ``text`` after the assistant's turn opens:
    at each step, toward the token that is the longest beginning of what is left."""

    def __init__(self, model: Any, tokenizer: Any, turn: str) -> None:
        from structgen.generate import tokenizer_info_for

        self.info = tokenizer_info_for(tokenizer, model.get_output_embeddings().weight.shape[0])
        self.turn = tokenizer.convert_tokens_to_ids(turn)  # the special token that opens the assistant's turn
        self.text: str | None = None
        self.fed: list[int] = []
        model.register_forward_hook(self._hook, with_kwargs=True)

    def _hook(self, module: Any, args: Any, kwargs: dict[str, Any], output: Any) -> Any:
        ids = kwargs["input_ids"]
        if ids.shape[0] != 1 or self.text is None:
            return output
        if int(kwargs["position_ids"][0, 0]) == 0:
            self.fed = []
        self.fed += [int(i) for i in ids[0]]
        ends = [i for i, t in enumerate(self.fed) if t == self.turn]
        done = self.info.join_bytes(self.fed[ends[-1] + 1 :]) if ends else b""
        goal = self.text.encode()
        if goal.startswith(done):
            rest = goal[len(done) :]
            if not rest:
                wanted = self.info.stop_token_ids[0]
            else:
                wanted = max(
                    (i for i, data in enumerate(self.info.decoded_vocab) if data and rest.startswith(data)),
                    key=lambda i: len(self.info.decoded_vocab[i]),
                )
            output.logits[0, -1, wanted] += 1000.0
        return output
