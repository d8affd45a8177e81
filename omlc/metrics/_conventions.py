"""The choices the papers make (or leave open) for undefined metric terms.

Every 0/0 or "no pair to rank" case is a named field of :class:`Conventions`,
so that a single object fixes how a whole evaluation treats empty label sets.
The presets name the combination each paper (or scikit-learn) uses.
"""
from dataclasses import asdict, dataclass, fields, replace

_SET_RULES = ("match", "one", "zero", "exclude")
_ALLOWED = {
    "precision_empty": _SET_RULES,
    "recall_empty": _SET_RULES,
    "accuracy_empty": _SET_RULES,
    "f1_empty": _SET_RULES,
    "ranking_empty": ("exclude", "zero"),
    "one_error_empty": ("exclude", "one", "zero"),
    "one_error_ties": ("first", "expected", "pessimistic", "optimistic"),
    "coverage": ("sklearn", "mulan"),
    "coverage_empty": ("exclude", "zero"),
    "average_precision_empty": ("exclude", "one", "zero"),
}


@dataclass(frozen=True)
class Conventions:
    """How undefined per-example and per-label terms are scored.

    Example-based rules (``*_empty``) take one of:

    ``"match"``   the term is 1 when the true and the predicted set are both
                  empty (the prediction "no label" was right), else 0 — the
                  thresholding paper's numbers (checked on bibtex: see datasets/results/alt.md).
    ``"one"``     the term is 1 whenever its denominator is empty
                  (scikit-learn ``zero_division=1``).
    ``"zero"``    the term is 0 whenever its denominator is empty
                  (scikit-learn ``zero_division=0``; the OSML-ELM reference code).
    ``"exclude"`` the example is left out of that metric's average.

    For ``accuracy_empty`` (Jaccard) and ``f1_empty`` (``f1_mean``) the only
    undefined case is both sets empty, so ``"match"`` and ``"one"`` coincide.

    Ranking rules: ``ranking_empty`` applies to ranking loss (both tie rules)
    and AUC on rows where Y = ∅ or Y = all labels (no relevant/irrelevant
    pair): ``"exclude"`` (the ALT paper's Rl, Sec. 6.2, and the ANSGD paper's AUC,
    Sec. 5 with eq. 3, divide by |Y||Ȳ|, undefined there) or ``"zero"``
    (loss 0, AUC 1, row kept in the denominator: the boosting paper's code and
    scikit-learn's ``label_ranking_loss``).  ``one_error_empty``,
    ``coverage_empty`` and ``average_precision_empty`` apply to rows with
    Y = ∅ only (Y = all labels is well defined for them); scikit-learn gives
    coverage 0 and average precision 1 there.

    ``one_error_ties`` decides which label is "top" when several share the
    maximum score: ``"first"`` the lowest label index (``numpy.argmax``),
    ``"expected"`` the fraction of tied top labels that are irrelevant (the
    error of a uniformly random tie-break), ``"pessimistic"`` an error unless
    all tied top labels are relevant, ``"optimistic"`` an error only if none is.

    ``coverage``: ``"sklearn"`` counts the labels scoring at least the lowest
    relevant score (``coverage_error``, 1-based, ties pessimistic);
    ``"mulan"`` is that count minus one (the 0-based Mulan / Zhang–Zhou form).

    ``zero_division``: the value of a label-based (micro/macro) precision,
    recall or F1 whose denominator is 0, e.g. the F1 of a label with
    tp = fp = fn = 0.  0 is the LIBSVM multilabel tools' value and
    scikit-learn's default (the ALT paper, Sec. 6.2, leaves it open); 1 is the
    alternative.
    """

    precision_empty: str = "match"
    recall_empty: str = "match"
    accuracy_empty: str = "match"
    f1_empty: str = "match"
    ranking_empty: str = "exclude"
    one_error_empty: str = "exclude"
    one_error_ties: str = "first"
    coverage: str = "sklearn"
    coverage_empty: str = "exclude"
    average_precision_empty: str = "exclude"
    zero_division: float = 0.0

    def __post_init__(self):
        for name, allowed in _ALLOWED.items():
            value = getattr(self, name)
            if value not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
        zd = self.zero_division
        if isinstance(zd, bool) or not isinstance(zd, (int, float)) or zd not in (0, 1):
            raise ValueError(f"zero_division must be 0 or 1, got {zd!r}")
        object.__setattr__(self, "zero_division", float(zd))

    @classmethod
    def preset(cls, name, **overrides):
        """The conventions of one paper (see ``PRESETS``), with overrides."""
        try:
            base = PRESETS[name]
        except KeyError:
            raise ValueError(f"unknown conventions preset {name!r}; "
                             f"choose from {sorted(PRESETS)}") from None
        return cls(**{**base, **overrides})

    def replace(self, **overrides):
        return replace(self, **overrides)

    def as_dict(self):
        return asdict(self)


#: Which paper uses which choice.  Unlisted fields keep the defaults above.
PRESETS = {
    # The defaults, filling what the ALT paper's metrics (Sec. 6.2) leave open:
    # Mulan-style set terms, ranking loss over rows that have a pair, macro-F1 0
    # for unused labels.
    "alt": {},
    # Boosting (Jung & Tewari): their rank loss (Sec. 3.1, w_Y = 1/(|Y||Y^c|)) is
    # undefined on a degenerate row; the authors' code scores it 0 and keeps it
    # in the average.
    "boosting": {"ranking_empty": "zero"},
    # ANSGD (Park & Choi, Sec. 5, AUC = 1 - ranking loss of eq. 3): AUC over rows
    # with both kinds of labels.
    "ansgd": {"ranking_empty": "exclude"},
    # CS-DPP (Chu, Huang & Lin, Sec. 2): c(y, y) = 0 forces F1 and accuracy 1
    # when both sets are empty;
    # its cost functions (``csdpp_costs``) build the rule in.
    "csdpp": {"accuracy_empty": "match", "f1_empty": "match"},
    # scikit-learn's metrics with zero_division=0 (its default after warning).
    "sklearn": {
        "precision_empty": "zero", "recall_empty": "zero",
        "accuracy_empty": "zero", "f1_empty": "zero",
        "ranking_empty": "zero", "coverage_empty": "zero",
        "average_precision_empty": "one", "zero_division": 0.0,
    },
}

FIELDS = tuple(f.name for f in fields(Conventions))


def resolve_conventions(conventions=None, **overrides):
    """A :class:`Conventions` from None (defaults), a preset name or an
    instance, with keyword overrides of single fields."""
    unknown = set(overrides) - set(FIELDS)
    if unknown:
        raise TypeError(f"unknown convention(s) {sorted(unknown)}; known: {list(FIELDS)}")
    if conventions is None:
        return Conventions(**overrides)
    if isinstance(conventions, str):
        return Conventions.preset(conventions, **overrides)
    if isinstance(conventions, Conventions):
        return conventions.replace(**overrides) if overrides else conventions
    raise TypeError("conventions must be None, a preset name or a Conventions instance, "
                    f"got {type(conventions).__name__}")
