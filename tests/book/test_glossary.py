"""The glossary (Appendix E) defines exactly the course's terms, in order, and every
{term} link in the book leads to one of them."""

import pathlib
import re
import unicodedata

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
GLOSSARY = ROOT / "book" / "appendix-e-glossary.md"

#: the terms every chapter may link to with {term}, as the project brief lists them
TERMS = [
    "activation function", "advantage", "associative memory", "attention",
    "attention matrix", "autoregressive", "backpropagation", "baseline", "bias",
    "capacity", "causal mask", "context", "context window", "cross-entropy loss",
    "delta rule", "dictionary", "embedding", "energy", "error signal", "fast weights",
    "feature map", "feed-forward layer", "Frobenius norm", "gate", "gated linear unit",
    "gradient", "gradient descent", "grouped-query attention", "head", "Hebbian rule",
    "hidden state", "Hopfield network", "in-context learning", "induction head",
    "interference", "Jacobian", "kernel", "kernel smoother", "key", "value", "query",
    "KV cache", "LayerNorm", "least squares", "logit", "loss", "Mamba", "MLP",
    "mixture of experts", "Nadaraya–Watson estimator", "orthonormal", "outer product",
    "parameters", "positional information", "preconditioner", "projection", "rank",
    "ReLU", "squared ReLU", "residual stream", "ridge regression", "SGD",
    "Sherman–Morrison formula", "singular value decomposition", "softmax",
    "state-space model", "superposition", "temperature", "test time",
    "test-time training", "token", "trace", "unembedding", "whitening",
    # Chapter 6
    "bandwidth", "fixed point", "metastable state", "saturation",
    "scaled dot-product attention", "soft dictionary",

    # added with Chapter 14
    "rank-one edit", "second-moment matrix",
    # added with Chapters 11-13
    "K-composition", "previous-token head", "test-time regression",

    # Chapters 7 and 8
    "bilinear form", "policy gradient", "pre-norm", "transformer block",
]
#: the terms Chapters 9 and 10 add
TERMS += ["fast weight programmer", "forget gate", "linear attention", "recurrent layer",
          "self-supervised loss"]

TERM_ROLE = re.compile(r"\{term\}`([^`]*)`")


def glossary_entries():
    """The glossary's entries, in file order: a list of (term lines, definition lines)."""
    match = re.search(r"^```\{glossary\}\n(.*?)^```", GLOSSARY.read_text(), re.S | re.M)
    assert match, "no {glossary} directive in Appendix E"
    entries = []
    previous_was_term = False
    for line in match.group(1).splitlines():
        if not line.strip() or line.startswith(":"):
            previous_was_term = False
            continue
        if line[0].isspace():
            assert entries, f"a definition line before any term: {line!r}"
            entries[-1][1].append(line.strip())
            previous_was_term = False
        elif previous_was_term:
            entries[-1][0].append(line.strip())
        else:
            entries.append(([line.strip()], []))
            previous_was_term = True
    return entries


def defined_terms():
    return [term for terms, _ in glossary_entries() for term in terms]


def link_target(role_text):
    """The term a {term} role points to: the part in <...> if there is one."""
    explicit = re.search(r"<([^<>]*)>\s*$", role_text)
    return (explicit.group(1) if explicit else role_text).strip()


def sort_key(term):
    """The key Sphinx's ``:sorted:`` glossary option orders entries by."""
    return unicodedata.normalize("NFD", term.lower())


def test_the_glossary_is_sorted():
    assert "\n:sorted:\n" in GLOSSARY.read_text()
    firsts = [terms[0] for terms, _ in glossary_entries()]
    assert firsts == sorted(firsts, key=sort_key)


def test_every_listed_term_is_a_term_line_and_nothing_else():
    defined = [term.lower() for term in defined_terms()]
    assert len(defined) == len(set(defined)), "a term is defined twice"
    assert sorted(defined) == sorted(term.lower() for term in TERMS)


@pytest.mark.parametrize("entry", glossary_entries(), ids=lambda e: e[0][0])
def test_every_entry_says_where_it_is_used(entry):
    terms, definition = entry
    text = " ".join(definition)
    assert text, f"{terms} has no definition"
    assert re.search(r"Used most in .*(Chapter|Appendix|Derivation)[^.]*\.$", text), (
        f"{terms} does not end with where it is used most"
    )


def test_every_place_an_entry_names_is_a_link():
    """"Used most in Chapter 7": each chapter, appendix and derivation an entry names is a
    {ref} link to it, never plain text (the reader goes there from the entry)."""
    for terms, definition in glossary_entries():
        # the definition without its links: what is left names no place
        plain = re.sub(r"\{ref\}`[^`]*`", "", " ".join(definition))
        named = re.findall(r"\b(?:Chapters?|Appendix|Derivation)\s+[0-9A-E]", plain)
        assert not named, f"{terms[0]}: {named} not linked"


@pytest.mark.parametrize("path", sorted((ROOT / "book").glob("*.md")), ids=lambda p: p.name)
def test_every_term_link_has_a_definition(path):
    defined = {term.lower() for term in defined_terms()}
    targets = [link_target(text) for text in TERM_ROLE.findall(path.read_text())]
    missing = sorted({target for target in targets if target.lower() not in defined})
    assert not missing, f"{path.name} links to undefined glossary terms: {missing}"


def test_link_target_reads_both_forms():
    assert link_target("capacity") == "capacity"
    assert link_target("keys <key>") == "key"
