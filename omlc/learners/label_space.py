"""Cost-sensitive online label-space dimension reduction (LSDR).

Chu, Huang & Lin (2019), "Dynamic principal projection for cost-sensitive
online multi-label classification", Machine Learning 108:1193-1230:

- :class:`DPP` — dynamic principal projection: the label vectors ``y`` (coded
  ±1, scaled by 1/sqrt(K)) are reduced online by capped matrix stochastic
  gradient (online PCA, eq. 3, step ``eta_t = (2/sqrt(t)) M/K``) plus the
  paper's row-sampling step ``Gamma_t`` (Lemma 2), which yields a projection
  ``P_t`` (M x K, orthonormal rows); an online ridge regression (lambda = 1)
  maps x to the code space and predictions decode by ``round(P^T r(x))``.
  ``basis`` picks how the regressor follows the drifting basis: ``"pbc"``
  (exact principal basis correction, eqs. 6-7: ridge onto the full label
  vector, projected at prediction), ``"pbt"`` (principal basis transform,
  eqs. 12-13: ``W <- W P_t P_{t+1}^T`` then a ridge step) or ``"none"``
  (eq. 5: targets in whatever basis they arrived).
- :class:`CSDPP` — the same with ``y`` replaced by ``C_t y`` (eq. 15), where
  ``C_t = diag(sqrt(delta))`` holds the label weights of eq. 14 computed from
  the cost, the prediction and the truth in O(K) from confusion counts.
  With the Hamming cost ``delta = 1/K`` and CS-DPP is DPP, bit for bit.
- Baselines of the paper's Table 3: :class:`OnlineBR` (one online ridge per
  label), :class:`OnlineRandomProjection` (static Gaussian encoding,
  pseudo-inverse decoding) and :class:`OnlineCS` (compressed sensing, Hsu et
  al. 2009: static Gaussian encoding of the 0/1 label vector, orthogonal
  matching pursuit decoding at the running label cardinality).

Regressors and the cut-off
--------------------------
``solver="ridge"`` keeps ``A^-1`` (d x d): O(d^2) per row, exact (the
compiled core lets up to min(128, d/16) rows' rank-one updates of it wait
for one rank-q BLAS-3 update, each row seeing the waiting ones: 4-8x faster
at d ~ 1,000-1,800, equal to rank-one steps to rounding). The waiting
updates are flushed at the end of every call (and DPP writes its basis out
there), so where a stream is cut into blocks moves the decisions, at
rounding level only and without growing along the stream: one call
against rank-one updates and blocks of 100 and of 7 rows, the largest
difference of any prequential decision was 4.5e-12 on enron (d = 1,001,
|D| up to 10), 1.7e-12 on bibtex (d = 1,836, 4,000 rows), 8e-15 on yeast,
with no label set changed, for O-BR, O-RAND, O-CS, DPP-PBC and CS-DPP-PBT
(``asv_benchmarks/scripts/label_space_block_cut.py``;
``tests/test_label_space.py::test_prequential_metrics_do_not_depend_on_the_block_cut``
holds them to 1e-10 and the metrics to the share of near ties). What
could turn rounding into a different decision is a choice between exact
ties: O-CS's pursuit picks the first of tied labels (:data:`OMP_TIE`) and
CS-DPP's adaptive threshold sums its cost totals row by row, the same
whatever the cut. At
rcv1-like widths (d = 47,236) that matrix is 18 GB, so ``solver="auto"``
(the default) uses ridge while ``n_features + fit_intercept <= 2048``
(``RIDGE_MAX_FEATURES``: A^-1 is then at most 32 MB and a row costs ~4 M
flops) and otherwise AdaGrad: ``"row_adagrad"`` where the regression's
outputs are the K labels (O-BR, DPP / CS-DPP with ``basis="pbc"``),
``"adagrad"`` where they are M code coordinates (PBT, none, O-RAND, O-CS).
``"sgd"`` is the paper's gradient-descent variant (Sect. 5.2: step
``eta / sqrt(t)``); ``"adagrad"`` is diagonal AdaGrad and ``"row_adagrad"``
AdaGrad with one accumulator per feature shared by its outputs
(``omlc._core.optimizers.RowAdaGrad``), all the linear core's optimisers
(squared loss with the codes as real-valued targets), so their feature-side
work is per nonzero of x.

Gap filled here (the paper's regressor is the exact ridge; its optimiser at
widths where ridge cannot run is open): diagonal AdaGrad pays a square root
and a division per nonzero x output, which over K = 101 outputs made O-BR
3-4x and DPP-PBC ~4x FALT's time on rcv1-shaped rows. The row-wise form
pays one per nonzero and steps the row's outputs as an axpy. Measured one
pass at the default steps (``asv_benchmarks/scripts/label_space_defaults.py``,
``label_space_speed.py``): over the K labels it is as good or better --
rcv1subset1-3 F1 cost O-BR .78/.74/.74 -> .66/.63/.63 (Hamming within
.0002), DPP-PBC .92/.82/.85 -> .86/.77/.81, CS-DPP-PBC .82/.74/.74 ->
.76/.70/.71; 50k rcv1-shaped rows micro-F1 O-BR .89 -> .93, PBC equal --
and 2-2.5x faster. Over the M code coordinates it is worse (rcv1subset1-3
F1 cost DPP-PBT .89/.80/.83 -> .92/.82/.86, CS-DPP-PBT .77/.68/.69 ->
.84/.77/.77): their scales differ (the leading principal direction carries
most of the label energy) and one shared step cannot follow them, and at
width M the per-coordinate cost is small.

DPP and CS-DPP with a named cost run their whole per-row loop compiled
(``omlc._core.label_space``, one call per block: decoding, eq. 14, the MSG
step with the draw, the PBC/PBT/none correction, the regression step); with
a callable cost the same loop calls the cost back (holding the GIL for those
calls only: ``label_weights_callable``, K + 1 calls a row), so a callable
equal to a named cost gives that cost's results. Under SGD/AdaGrad, PBT keeps its
basis change ``W <- W P_t P_{t+1}^T`` as a lazy M x M factor F (effective
weights ``W F``, F folded into W when it drifts from orthogonal, e.g. when
the dropped row changes), so a row costs O(nnz M^2 + K M + M^3), not
O(d M^2). Per-coordinate AdaGrad takes its step in the current code frame,
as the per-row transform does: the accumulators G belong to the effective
coordinates (``G += (x c^T)^2``, c the effective coefficient), the step
``dV = eta x c^T / (delta + sqrt(G))`` is taken there and lands on W as
``W -= dV F^-1`` (F^-1 follows F by the Woodbury identity, O(M^3), and is
inverted afresh every 32 rows; the product O(nnz M^2)), so ``W F`` moves exactly as ``dpp_learn(fold_tol=0)``'s
weights (tested to rounding). SGD and row-wise AdaGrad step in W's
coordinates with the stored-frame coefficient ``F c`` (the same step while F
is orthogonal; one accumulator per feature does not see the frame).

Gap filled here (issue 21): the first compiled loop kept G with W's stored
coordinates, which the basis change does not rotate, and that cost
CS-DPP-PBT's F1: the eigenvectors of the near-equal (capped) sigma turn by
O(1) every row (``||P_t P_{t+1}^T - I||_F`` about 4.4 at M = 10, a random
rotation's sqrt(2M) = 4.5), and the per-row transform takes each AdaGrad
step in that freshly turned frame. Measured one pass (seed-1000 order,
``label_space_defaults.py SET csdpp:pbt@threshold=0.0`` with a switch to the
stored frame that has since been removed; tests/reference_label_space.py keeps
the rule; stored frame -> current frame): CS-DPP-PBT F1 cost at threshold 0
rcv1subset1-3 .7725 / .6772 / .6919 -> .6601 / .6072 / .6349, at the
default adaptive threshold .7411 / .6650 / .6813 -> .6485 / .6040 / .6301
(now below PBC's .6913 / .6588 / .6609); DPP-PBT's Hamming loss .02759 /
.02362 / .02448 -> .02747 / .02359 / .02422. Its price is the M x M product
per nonzero (see the speed table in datasets/results/csdpp_bench.md).
Where ``solver="adagrad"`` is forced on the small Mulan sets (they use the
exact ridge by default) the exact frame is not better everywhere: CS-DPP-PBT
F1 cost at threshold 0 bibtex .8011 -> .7928, corel5k .8537 -> .8403, medical
.4899 -> .4848, but yeast .3712 -> .4466 (DPP's Hamming .2076 -> .2612),
enron .4983 -> .5107, delicious .7265 -> .7370. Cheaper candidates measured
and rejected before (rcv1subset1, F1 cost at threshold 0): folding every T
rows (T = 1 is the exact step; 2-256: .768-.804), folding when ``||F - I||_F
> 0.5`` (.693, but 4,296 folds of 6,000 rows: the transform's cost), and
choosing the new eigenbasis nearest the old one within sigma clusters
(Procrustes; F stays near I, .761-.782): the gain needs each step taken in
the new basis' own frame. Files learned with the stored frame load and
predict the same and go on learning with the current frame, their G read
as the current frame's (omlc.persistence_checks).
The exact ridge applies the transform directly. The online PCA's basis
is kept as ``Q = R B`` (the rotation on a small factor) and its
eigenproblem solved as a secular equation, so its step is O(M K + M^3),
not O(M^2 K); Q is written out at the end of each block. O-BR,
O-RAND and O-CS under SGD and AdaGrad (with sample weights or without)
learn a chunk of rows per call of the linear core, and on the exact ridge
a chunk per call of ``ridge_learn`` (their
targets do not depend on the predictions, so a chunk's are computed before
it and its decoding after it: O-CS's orthogonal matching pursuit runs over
the chunk's rows at once, :func:`omp_rows`).

Gap decisions
-------------
The paper's Algorithm 1 is absent from its available text; omlc fills in:

- the start of the online PCA: ``U_1 = 0`` (no basis rows), with the trace
  constraint ``tr(U) <= M`` while the basis has fewer than M+1 rows and
  ``= M`` after (the public MSG code's convention). A random orthonormal
  start with ``sigma = M/(M+1)`` caps the data's directions out (on
  delicious, M = 10 of K = 983: 1.3% of the label energy after 10 rows,
  11% after 1,000; from 0: ~93% after 10). While the basis fills, P_t has
  zero rows in place of the missing directions.
  Measured (issue 21; ``asv_benchmarks/scripts/label_space_pca_energy.py``,
  one seed-1000 pass): the ``= M`` half of this convention is why the online
  basis lags the batch PCA of the pass (which, in hindsight, gives DPP-PBC a
  lower Hamming loss on medical, enron, mediamill, bibtex). Once the basis
  has M+1 rows the projection onto ``tr = M`` lifts the sigma of the early
  rows' directions from ~eta to ~0.87 (medical), against which every later
  step (``eta_t ||v||^2 = 2M / (K sqrt(t))``) is small: the basis keeps
  0.89 of its overlap with the span it had at row M+1 for the whole pass.
  Label energy it misses, prequentially, relative to the batch basis':
  medical 1.58x, enron 1.35x, mediamill_reduced 1.64x, bibtex 1.27x,
  corel5k 1.74x, cal500 1.47x, yeast 1.11x. Neither ``pca_step``
  (0.01-64: medical 1.58-1.77x, enron 1.23-1.55x, mediamill 1.36-1.84x),
  a larger rank cap (M+2 to M+16, rows dropped with marginals
  ``1 - sigma_i``), nor the M rows of largest sigma in place of the draw
  closes it; the PCA of the rows so far does (1.02-1.12x; cal500's 502
  rows 1.21x), and most of it closes with the same MSG, its iterate kept
  under ``tr(U) <= M`` throughout and P_t drawn by Lemma 2 from the
  iterate's projection onto ``tr = M`` (medical 1.33x, enron 1.11x,
  mediamill_reduced 1.17x, corel5k 1.18x, cal500 1.27x, yeast 1.09x,
  rcv1subset1 1.41x -> 1.07x, delicious 1.60x -> 1.12x; the trace then
  stays at 2-4 of M on medical, enron, mediamill_reduced, and U is a
  1/sqrt(t)-weighted running sum of the ``v v^T`` cut at rank M+1). More
  captured energy is not less cost everywhere: with that step (omlc's own
  per-row Python loop, exact ridge, the step swapped; as shipped -> this),
  DPP's Hamming loss PBT / PBC:
  medical .01743 / .01747 -> .01606 / .01577 (batch basis in hindsight, a
  NumPy PBC: .01550), enron .05818 / .05844 -> .05668 / .05695 (.05656),
  mediamill_reduced .03326 / .03324 -> .03244 / .03234 (.03222), yeast
  .20752 / .20758 -> .20725 / .20737, bibtex (NumPy PBC) .01378 -> .01356
  (.01364), rcv1subset1 (AdaGrad / row-wise AdaGrad) .02747 / .02721 ->
  .02685 / .02655, delicious .01885 / .01885 -> .01884 / .01885, but corel5k .00961 / .00961 -> .00976 / .00977 (.00979:
  a data-fitted basis is worse there, away from predicting no label) and
  cal500 .14367 / .14362 -> .14480 / .14488; CS-DPP's F1 cost PBT / PBC
  rcv1subset1 .6481 / .6913 -> .6252 / .6728, .4483 / .4412 -> .4448 / .4359 medical, .5618 / .5540 -> .5523 / .5450
  enron, .4686 / .4683 -> .4637 / .4632 mediamill_reduced, .8282 / .8138
  -> .8014 / .7943 corel5k, .5421 / .5415 -> .5403 / .5398 cal500, but
  .3633 / .3636 -> .3663 / .3641 yeast (``label_space_pca_energy.py SET
  --learners``; ``--hamming msg,le,batch`` for the NumPy PBC). Not
  adopted: it loses on corel5k and cal500 (DPP) and yeast (CS-DPP), its
  iterate leaves the
  paper's feasible set (``tr(U) = M``, Sect. 4.1), and the compiled step
  and the reproduction rows were not redone with it; a candidate for a
  later session.
- the draw ``P_t ~ Gamma_t``: one uniform ``u`` per learner (``u_``), reused
  at every t, picks the dropped row from the cumulative drop probabilities.
  Lemma 2 fixes only the distribution of each P_t, which this keeps; a fresh
  draw per row changed the dropped row on most steps, and PBT's
  ``P_t P_{t+1}^T`` then threw away code dimensions the ridge regressor
  cannot relearn (its A^-1 only shrinks): DPP-PBT predicted no label on a
  27-label gene-function set.
- reference point o = 0; ``M`` from a fraction is
  ``max(1, round-half-up(f K))``, and the default ``code_dim="auto"`` is
  ``min(K, max(8, round(0.1 K)))`` (:data:`AUTO_CODE_FLOOR`); a constant feature
(``fit_intercept=True``); a label is predicted relevant iff its decoded value
is > 0 (omlc's contract: ``predict == decision_function > 0``; the paper maps
0 to +1, which matters only at t = 1 when every output is 0). When
``M >= K`` no reduction is possible and ``P = I``.

Kept as the paper has them, after measuring the alternatives (issue 21; one
pass, ``asv_benchmarks/scripts/label_space_defaults.py``):

- ``lam = 1`` on raw features (Sect. 5; its Theorem 3 assumes ``||x|| <= 1``).
  On sparse binary features ``||x||^2`` is the row's number of nonzeros (8 on
  corel5k, 18 on delicious), so until a few d rows have passed the ridge
  nearly interpolates and predicts rare labels that are not there: at the
  paper's decoding (``margin=0.0``; the default margin answers this at the
  decoding, see "Decoding margin") DPP's
  Hamming loss is above predicting no label over delicious' first ~2,000 rows
  (d = 500) and corel5k's first ~4,000 (d = 499) and below after, so a pass
  over all of delicious (16,105 rows: .0189 vs .0194) is below it and one over
  corel5k (5,000 rows: .0096 vs .0094; second half .00939 vs .00941) is not.
  ``lam = 10`` moves the crossing earlier (delicious' first 4,000 rows .0200
  -> .0188) but costs the dense sets (mediamill 2,000 rows .0333 -> .0343,
  medical .0174 -> .0178, emotions F1 cost .446 -> .471), so the default stays
  at the paper's value: raise ``lam`` for a short stream of sparse features.
- DPP's decoding threshold 0 (Hamming; CS-DPP's other costs: see
  "Decoding threshold" below; the row-dependent margin that DPP adds under
  the exact ridge: "Decoding margin"): a fixed threshold above 0 (up to 0.5 on the
  +-1 scale) never brings corel5k's or delicious' Hamming loss below
  predicting no label that 0 misses (it only predicts fewer labels), and it
  raises the F1 cost; the adaptive rule on the Hamming cost is no better
  (emotions .2249 -> .2291, scene .1197 -> .1205, corel5k .00961 -> .00942,
  level with predicting no label, not below it). Even the best of 41
  thresholds per label, picked in hindsight, only reaches .009384 on corel5k
  (no label .009417): its decoded values hold almost nothing to cut at one
  fixed place (the margin cuts each row where its x^T A^-1 x puts it)
  (curves: datasets/results/label_space_curves.png, from
  ``asv_benchmarks/scripts/label_space_curves.py corel5k delicious``).
- raw features (the paper does not say how it scaled them): against rows
  scaled to ``||x|| = 1`` (Theorem 3's assumption) ``lam = 1`` is a weak prior
  on bag-of-words rows, and CS-DPP's F1 / accuracy cost then loses to DPP's at
  M >= 25% of K on enron and medical (datasets/results/csdpp.md) and ties it on
  bibtex decoded at 0 (F1 cost .843 vs .842; rows scaled: .797 vs .861; the
  default adaptive threshold: .834);
  scaled rows reverse that but take emotions (dense, values up to 237) from
  .344 to .459 Hamming at M = 1. Scale sparse rows to unit norm before learning or raise
  ``lam`` where that matters.
- the reference point o = 0 (Sect. 3.1 allows any fixed o; PLST's is the
  label mean). A running mean, the basis learned on ``C_t y_t - o`` and the
  mean's residual ``(I - P^T P) o`` added at decoding, left DPP's Hamming
  loss where it was (yeast .2075 -> .2083, rcv1subset1 .0275 -> .0282,
  corel5k .00961 -> .00961) and moved CS-DPP-PBT's F1 cost both ways
  (bibtex .843 -> .827, corel5k .828 -> .814, enron .560 -> .551; medical
  .446 -> .456, rcv1subset1 .662 -> .818; a prototype on the Python loop,
  decoded at 0), so o stays 0.

corel5k, the one shipped set where DPP's one-pass Hamming loss at the
paper's decoding stays above predicting no label (.00961 vs .009417; second
half .00939 vs .00941; 15 orders .00966, above in every order). The
decoding margin chosen online (below, "Decoding margin"; the default) takes
it to .009404 over the 15 orders, below in 13 (PBC: 15). Before it, nothing
a default could change got it materially below
(``asv_benchmarks/scripts/label_space_nolabel.py corel5k``, one pass,
seed-1000 order unless said). The best (code_dim, lam) of a 4 x 7 grid
picked in hindsight is 0.2% below (M = 75, lam = 20; -0.2%, -0.16%, -0.07%
over three orders; O-BR at lam = 20 -0.2%, -0.3%, +0.01%), and at lam = 1
every M is 0.1-4.4% above (M = 8: +0.1-0.7%, all but abstaining); AdaGrad (eta
.002-.05) gives .0117-.0207, SGD .0109; follow-the-leader per label between
the model and no label .009425; a regressor shrinking toward
no label (o = the all-negative vector, targets coded {0, 1}) .009595, an
unpenalised intercept .009604, the Vovk-Azoury-Warmuth forward prediction
(shrunk by 1 / (1 + x^T A^-1 x) toward o) .009407 but scene .1197 -> .1318
and medical .0175 -> .0254. The basis is not what lags: the batch PCA of
the whole pass in its place gives .00979. lam = 20 is a per-set choice,
not a default (DPP-PBT: scene .1197 -> .1142, enron .0582 -> .0507, but
emotions .2249 -> .2302, medical .0174 -> .0185, mediamill .0333 -> .0346),
and choosing it online does not get there either: four learners (lam 1, 4,
16, 64), each row predicted by the one of least Hamming loss so far, give
.009410 / .009424 / .009423 over three orders (per label: .009425-.009432)
and cost emotions .2249 -> .2367; lam by type-II maximum likelihood over
the rows so far (MacKay's fixed point, re-chosen at t = 16, 32, ...; PBC
prototype) gives .009517: it is near 0 while t < d and reaches 10.5 by
t = 4,096 (elsewhere it gains, e.g. enron .0583 -> .0509, scene .1197 ->
.1149, but emotions .2248 -> .2594).
The margin to be had is small for any learner: the prequential 10-nearest-
neighbour majority vote reaches .009369, and on Mulan's split (one pass
over the 4,500 train rows, then the 500 test rows) DPP-PBT's test loss is
.009449 / .009428 (Mulan / seed order) against .009428 for no label and
O-BR's .009358. The data hold ~0.5% of Hamming loss over predicting no label
at this length; lam = 1 spends more than that on the first ~3,000 rows.

Decoding threshold
------------------
Gap filled here (eq. 1 and Theorem 5 decode by ``round``, i.e. at 0): for
the F1, accuracy and rank costs CS-DPP decodes at an adaptive threshold
(``threshold="auto"``). Theorem 5 bounds the cost through the code of
``C_t y``, whose label scales ``sqrt(delta_k)`` (eq. 14) depend on the row
and on the prediction, so 0 is not where the cost of the decoded set is
lowest: on bibtex (one pass, the defaults) CS-DPP-PBT predicted ~24 labels
a row where 2.4 are relevant (Hamming loss .159) and its F1 cost (.843) did
not beat DPP's (.842). The rule is follow-the-leader over a grid of
thresholds (:data:`THRESHOLD_GRID`, 81 values on a ±1 label's scale): each
candidate's total cost (the learner's own, from each learned row's
prequential decoded values; ``thr_cost_``) and each row cut at the
candidate of least total over the rows before it (ties: nearest 0);
compiled (``omlc._core.label_space.threshold_follow``, O(K + 81) a row,
each label's grid interval read from a table indexed by the top bits of
its double: ~6k instructions a row on rcv1-shaped rows, against ~91k for
CS-DPP-PBC's whole step and ~50k for FALT's; callgrind, 20,000
``make_rcv1_like`` rows). Only the
reported set moves: eq. 14's weights keep the code's own
decoding at 0, so the learning is the paper's. Measured (one pass,
seed-1000 order, ``label_space_defaults.py SET csdpp:pbt
csdpp:pbt@threshold=0.0``), CS-DPP F1 cost PBT / PBC, 0 -> adaptive:
bibtex .843 -> .834 / .825 -> .824 (DPP .842 / .840), cal500 .602 -> .542,
mediamill .479 -> .469, yeast .377 -> .363, emotions .395 -> .389,
rcv1subset1-3 .773/.677/.692 -> .741/.665/.681 (PBC .763/.705/.707 ->
.691/.659/.661); a little worse on scene (.371 -> .376), medical (.446 ->
.448), enron (.560 -> .562) and corel5k (.828 -> .828), still far below
DPP there. The accuracy and rank costs gain likewise on most sets (rank:
cal500 .306 -> .270, mediamill .173 -> .137, rcv1subset1 .256 -> .208;
accuracy: cal500 .744 -> .700, bibtex .897 -> .883), at the price of the
other costs: the rule serves the learner's cost. DPP (Hamming) keeps 0:
its decoded value estimates the ±1 label, whose Hamming-optimal cut is 0,
and the rule was no better there (above). ``threshold=0.0`` is the paper's
decoding (the reproduction, ``omlc reproduce csdpp``, pins it).

Decoding margin
---------------
Gap filled here (issue 21; the paper decodes every row at 0): under the
exact ridge, DPP (the Hamming cost) predicts a label iff its decoded value,
on a ±1 label's scale, exceeds ``kappa x^T A^-1 x`` (``margin="auto"``),
``x^T A^-1 x`` the row's predictive variance factor before it is learned
(the Sherman-Morrison step computes it anyway), kappa chosen online from
:data:`MARGIN_GRID` (0, .25, .5, 1, 2) by follow-the-leader on each
candidate's Hamming loss over the rows learned (``margin_cost_``; ties:
0), the threshold's rule on one shared model (compiled
``omlc._core.label_space.margin_follow``, O(5 K) a row). kappa = 1 is
where the Vovk-Azoury-Warmuth forward prediction toward the all-negative
vector (the prediction shrunk by ``1 / (1 + x^T A^-1 x)``) cuts. Early in
a stream of sparse rows (t small against d) the ridge at lam = 1 nearly
interpolates, and a row of rarely seen features has a large ``x^T A^-1
x``: its decoded values are mostly noise, and the margin keeps rare labels
from crossing; as rows pass it shrinks with ``x^T A^-1 x``. Measured
(``label_space_nolabel.py SET --parts margin``: one pass, orders
``default_rng(1000 + s)``, learner seed s; corel5k 15 orders, the others
3), DPP-PBT Hamming, paper's decoding -> default: corel5k .009656 ->
.009404 (no label .009417; PBC .009657 -> .009404), cal500 .1431 -> .1395,
delicious .01884 -> .01857, scene .1200 -> .1193, emotions .2275 -> .2268,
mediamill_reduced .03297 -> .03289, yeast .2077 -> .2075, enron .05748 ->
.05751, bibtex .013911 -> .013914, medical .017398 -> .017473 (+0.4%, the
largest loss). A fixed kappa does not do it (kappa = 1: corel5k .009401
but emotions .2317, scene .1321, medical .0254), nor the lower confidence
bound ``kappa sqrt(x^T A^-1 x)`` chosen the same way (corel5k .009408,
emotions +0.9%). ``"auto"`` is the paper's decoding elsewhere: on CS-DPP's
F1 cost, after the adaptive threshold, the rule stays at 0 (emotions,
scene, enron, medical unchanged, yeast +0.1%); the gradient solvers keep
no ``A^-1``, and a diagonal stand-in (``sum x_i^2 / (lam + sum of x_i^2
before)``) gave nothing on rcv1subset1 (.027470 -> .027485), so their
per-row work is unchanged. Only the reported set moves (eq. 14's weights
and the learned state are the paper's); ``margin=0.0`` is the paper's
decoding (the reproduction pins it). As the threshold's rule serves
CS-DPP's cost, this one serves DPP's, at the price of the other costs where
it acts (DPP-PBT, one pass, seed-1000 order, ``label_space_defaults.py SET
dpp:pbt@margin=0.0 dpp:pbt``; F1 cost paper -> default: corel5k .950 ->
.988, cal500 .667 -> .744, emotions .446 -> .484, delicious .866 -> .880,
scene .478 -> .497; medical, enron, bibtex, yeast, mediamill within .01):
for the F1 / accuracy / rank costs use CS-DPP with that cost, which keeps
its decoding.

Non-finite state: the exact ridge keeps ``(lam I + sum x x^T)^-1``; a step
that would leave that inverse to rounding (features ~1e6 and above against
``lam = 1``, or a vanishing ``lam``) and any non-finite score are refused
with omlc's ``NonFiniteError`` naming the row, the learner left as it was
before that row (the rows before it learned). Scale the features or raise
``lam``. The gradient solvers raise the linear core's ``NonFiniteError``,
re-worded with the row's position.
"""
import functools
import math
import warnings

import numpy as np
from omlc._core import label_space as _lsk
from omlc._core.linear import NonFiniteError, learn
from omlc._core.losses import SquaredLoss
from omlc._core.optimizers import SGD, AdaGrad, RowAdaGrad, ScaledSGD
from omlc._core.rowstream import RowStream, all_finite
from omlc._validation import check_fits, check_random_state, csr_arrays
from omlc.learners._label_costs import (COSTS, cost_from_counts, example_costs, label_weights,
                                        label_weights_bruteforce, label_weights_callable)
from omlc.learners._online_pca import CappedMSG
from omlc.learners._regressor import _Regressor
from omlc.learners.base import BaseLearner, positive_float

__all__ = ["DPP", "CSDPP", "OnlineBR", "OnlineCS", "OnlineRandomProjection", "COSTS",
           "cost_from_counts", "label_weights", "label_weights_bruteforce", "example_costs",
           "CappedMSG", "RIDGE_MAX_FEATURES", "AUTO_CODE_FLOOR", "THRESHOLD_GRID", "OMP_TIE"]

RIDGE_MAX_FEATURES = 2048
#: AdaGrad's default step on +-1 targets (O-BR, O-RAND, O-CS); DPP and
#: CS-DPP scale it by 1/sqrt(K) (CSDPP._adagrad_scale).
ADAGRAD_ETA = 0.1
BASES = ("pbc", "pbt", "none")
SOLVERS = ("auto", "ridge", "sgd", "adagrad", "row_adagrad")
COST_IDS = {c: int(getattr(_lsk.Cost, c.upper())) for c in ("hamming", "rank", "f1", "accuracy")}
BASIS_IDS = {b: int(getattr(_lsk.Basis, b.upper())) for b in BASES}
SOLVER_IDS = {"ridge": int(_lsk.Solver.RIDGE), "sgd": int(_lsk.Solver.SGD_SOLVER),
              "adagrad": int(_lsk.Solver.ADAGRAD_SOLVER),
              "row_adagrad": int(_lsk.Solver.ADAGRAD_SOLVER)}
_TAIL = (" at row {pos} of the block (row {index} of the data): the features are too large "
         "for this model's lam={lam!r} (or lam too small); scale them (e.g. "
         "omlc.preprocessing.MaxAbsScaler) or raise lam.")
_ERRORS = {
    int(_lsk.Error.NONFINITE_SCORES): "non-finite scores (NaN or inf)" + _TAIL
    + " The rows before it were learned; that row was not.",
    int(_lsk.Error.RIDGE_PRECISION): "the ridge regression's inverse (lam I + sum x x^T)^-1 lost its "
    "precision" + _TAIL + " The rows before it were learned; that row was not.",
    int(_lsk.Error.GRADIENT_OVERFLOW): "a squared gradient overflows the optimiser's accumulators" + _TAIL
    + " The model's weights may be inconsistent: refit it.",
    int(_lsk.Error.COST_VALUE): "the cost's label weights (eq. 14) are not finite and non-negative"
    " at row {pos} of the block (row {index} of the data): the cost callable must return a "
    "finite number for every pair of label vectors. The rows before it were learned; that row "
    "was not."}


def _finite_scores(D):
    """The scores, or NonFiniteError naming the first row that is not finite
    (state given NaN or inf, e.g. by a tampered pickle: never silent NaN)."""
    if all_finite(D):               # compiled, ~0.1 us: the single-row hot path
        return D
    bad = ~np.isfinite(D).all(axis=1) if D.ndim == 2 else ~np.isfinite(D)
    if bad.any():
        _non_finite_scores(int(np.flatnonzero(bad)[0]))
    return D


def _non_finite_scores(row):
    raise NonFiniteError(f"non-finite scores (NaN or inf) at row {row}: the model's state "
                         "holds NaN or inf; refit it", row)


def _dense_labels(yp, yi, rows, K):
    """The label rows ``rows`` of a CSR label matrix (indptr ``yp``, indices
    ``yi``) as a dense boolean block, in NumPy passes (a Python loop over the
    rows cost ~1-2 us a row, as much as O-BR's learning step)."""
    rows = np.asarray(rows, np.int64)
    start = np.asarray(yp[rows], np.int64)
    count = np.asarray(yp[rows + 1], np.int64) - start
    Yc = np.zeros((len(rows), K), bool)
    total = int(count.sum())
    if total:
        first = np.cumsum(count) - count          # each row's first slot in the block
        pos = np.arange(total) + np.repeat(start - first, count)
        Yc[np.repeat(np.arange(len(rows)), count), np.asarray(yi)[pos]] = True
    return Yc


#: Above this many floating-point operations per learned row, a DPP / CS-DPP
#: configuration warns with its estimate (about 0.1 s a row on one core).
SLOW_ROW_FLOPS = 1e8


def _check_dpp_size(name, M, K):
    """Refuse, with the figure, a basis that cannot fit in memory, and warn
    when a row will take long: the online PCA's step touches its M + 2 basis
    rows of length K a few times (the rotation itself lands on a small
    (M + 2)^2 factor, O(M^3)), and decoding, projection and target take a
    few P x K passes more (P = I, K x K, at full rank)."""
    P_rows = M if M < K else K                   # M >= K: P = I (K x K)
    # basis Q, P and its next value, the compiled loop's scratch (~3 M K)
    check_fits(8 * K * ((M + 1) * 3 + 3 * P_rows + 16),
               f"{name}: the label-space state (code_dim {M:,} x {K:,} labels)")
    flops = 6 * (M + 2) * K + 2 * (M + 2) ** 3 + 8 * P_rows * K
    if flops > SLOW_ROW_FLOPS:
        warnings.warn(f"{name}: code_dim {M:,} with {K:,} labels costs about {flops:.2g} "
                      f"floating-point operations per learned row (O(code_dim x labels + "
                      f"code_dim^3), ~{flops / 1e9:.2g} s a row at 1 GFLOP/s); a smaller "
                      f"code_dim is much faster", UserWarning, stacklevel=5)


#: ``code_dim="auto"`` is M = min(K, max(AUTO_CODE_FLOOR, round(0.1 K))):
#: 10% of K (the paper's smallest M) where that is at least 8, so the
#: rcv1-shaped K = 101 gets M = 10 and K = 983 gets 98; on the small Mulan
#: sets 10% is one or two dimensions (K = 6-14), which cannot hold their
#: label structure and loses to predicting no label, so the floor keeps 8
#: (all of K = 6: no reduction, the learner is then online ridge BR).
AUTO_CODE_FLOOR = 8


#: ``threshold="adaptive"``'s candidate thresholds, on the scale of a +-1
#: label (the decoded value times sqrt(K)): 0 and +-0.02 ... +-20 spaced by
#: a factor of about 1.19, so one grid holds DPP's decoded values (order 1)
#: and CS-DPP's cost-weighted ones (order sqrt(delta K), up to ~10) alike.
THRESHOLD_GRID = np.concatenate([-np.geomspace(0.02, 20.0, 40)[::-1], [0.0],
                                 np.geomspace(0.02, 20.0, 40)])
_GRID_ZERO = 40
#: Rows per call of the compiled loop when the adaptive rule needs the
#: scores of a block learned without them (``fit``): bounds the buffer.
_RULE_CHUNK = 4096
#: ``margin="adaptive"``'s candidate margins kappa: a label is predicted iff
#: its decoded value, on a +-1 label's scale, exceeds the threshold plus
#: ``kappa x^T A^-1 x`` (see "Decoding margin" in the module notes). 0 (the
#: paper's decoding) first: ties go to it.
MARGIN_GRID = np.array([0.0, 0.25, 0.5, 1.0, 2.0])


def _ridge_gamma(reg, X, chunk=1024):
    """Each row's ``x^T A^-1 x`` under the exact ridge's current ``A^-1``
    (the constant feature included): the decoding margin's scale for rows
    predicted without learning them."""
    d, A = reg.d, reg.Ainv
    if X.shape[0] == 1:
        return _ridge_gamma_row(reg, X)
    out = np.empty(X.shape[0])
    for a in range(0, X.shape[0], chunk):
        Xc = X[a:a + chunk]
        T = np.asarray(Xc @ A[:d])
        if reg.intercept:
            T += A[d]
        g = np.asarray(Xc.multiply(T[:, :d]).sum(axis=1)).ravel()
        out[a:a + chunk] = g + T[:, d] if reg.intercept else g
    return out


def _ridge_gamma_row(reg, X):
    """_ridge_gamma of a 1-row CSR matrix without SciPy's products (~100 us
    of a single-row decision): the same sums in the same order, so the same
    bits. SciPy's csr @ dense adds each stored entry's row of A^-1 into a
    zero row in storage order; ``multiply(...).sum(axis=1)`` adds the
    entries' products into 0.0 in storage order. Here the first is NumPy's
    sum over axis 0 of a zero row and the entries' products (row after row),
    the second a running sum (cumsum) from 0.0."""
    d, A = reg.d, reg.Ainv
    a, b = X.indptr[0], X.indptr[1]
    idx = X.indices[a:b]
    v = X.data[a:b].astype(np.float64)
    P = np.zeros((idx.size + 1, A.shape[1]))
    np.multiply(v[:, None], A[idx], out=P[1:])
    T = np.add.reduce(P, axis=0)
    if reg.intercept:
        T += A[d]
    e = np.zeros(idx.size + 1)
    np.multiply(v, T[idx], out=e[1:])
    g = np.cumsum(e)[-1]
    return np.array([g + T[d] if reg.intercept else g])


def _resolve_dim(code_dim, K):
    if isinstance(code_dim, str) and code_dim == "auto":
        return min(K, max(AUTO_CODE_FLOOR, int(math.floor(0.1 * K + 0.5))))
    if isinstance(code_dim, bool):
        raise ValueError(f"code_dim must be a positive int, a fraction in (0, 1] or 'auto', "
                         f"got {code_dim!r}")
    if isinstance(code_dim, (int, np.integer)):
        return min(int(code_dim), K)
    return max(1, int(math.floor(float(code_dim) * K + 0.5)))


def _check_dim(code_dim):
    if isinstance(code_dim, str) and code_dim == "auto":
        return
    if isinstance(code_dim, bool):
        raise ValueError(f"code_dim must be a positive int, a fraction in (0, 1] or 'auto', "
                         f"got {code_dim!r}")
    if isinstance(code_dim, (int, np.integer)):
        if code_dim < 1:
            raise ValueError(f"code_dim must be >= 1, got {code_dim!r}")
        return
    try:
        f = float(code_dim)
    except (TypeError, ValueError):
        raise ValueError(f"code_dim must be a positive int or a fraction in (0, 1], "
                         f"got {code_dim!r}") from None
    if not (0.0 < f <= 1.0):
        raise ValueError(f"code_dim as a fraction must be in (0, 1], got {code_dim!r}")


class _OnlineLSR(BaseLearner):
    """Shared: parameter checks, solver choice, the per-row loop.

    Sample weights: OnlineBR, O-RAND and O-CS weigh each row's regression
    step (``_Regressor.step``: the weighted ridge solution, or the gradient
    scaled); a row of weight 0 is only predicted. DPP and CS-DPP repeat rows
    (see BaseLearner): their online PCA of the label vectors has no weighted
    form in the paper.
    """

    # A label space (or a ranking over labels) needs a label: Y with no
    # columns is refused by BaseLearner with a clear error.
    _min_labels = 1

    def _check_common(self):
        positive_float("lam", self.lam)
        if self.solver not in SOLVERS:
            raise ValueError(f"solver must be one of {SOLVERS}, got {self.solver!r}")
        if self.eta is not None:
            positive_float("eta", self.eta)
        if not isinstance(self.fit_intercept, (bool, np.bool_)):
            raise ValueError(f"fit_intercept must be a bool, got {self.fit_intercept!r}")

    def _solver_for(self, d):
        if self.solver != "auto":
            return self.solver
        if d + bool(self.fit_intercept) <= RIDGE_MAX_FEATURES:
            return "ridge"
        # see "Regressors and the cut-off" in the module notes
        return "row_adagrad" if self._label_outputs() else "adagrad"

    def _label_outputs(self):
        """Whether the regression's outputs are the K labels (equal scales:
        ``solver="auto"`` then takes the row-wise AdaGrad at large widths),
        not code coordinates."""
        return False

    def _adagrad_scale(self):
        """AdaGrad's default step in units of ADAGRAD_ETA (see CSDPP's)."""
        return 1.0

    def _make_regressor(self, d, width):
        solver = self._solver_for(d)
        eta = self.eta
        if eta is None:         # (ridge has no step; it keeps the old 0.1)
            ada = ADAGRAD_ETA * self._adagrad_scale()
            eta = {"sgd": 1.0, "adagrad": ada, "row_adagrad": ada}.get(solver, ADAGRAD_ETA)
        return _Regressor(d, width, solver, float(self.lam), eta, self.fit_intercept,
                          type(self).__name__)

    @property
    def solver_(self):
        """The regression solver in use (``"ridge"``, ``"sgd"``, ``"adagrad"`` or
        ``"row_adagrad"``)."""
        self._check_fitted()
        return self.reg_.solver

    #: Rows per call of the linear core in the chunked AdaGrad path.
    CHUNK = 2048
    #: The exact ridge's rows whose updates of A^-1 wait for one rank-q
    #: update (0: the compiled core's choice, RIDGE_BLOCK_MIN; 1: a rank-one
    #: update a row). Results differ at rounding level only.
    _ridge_block = 0

    def _learn_chunked(self, X, Y, order, out):
        """The baselines' targets do not depend on their predictions, so a
        chunk's targets are known up front and the regression runs on the
        linear core, one call per chunk (squared loss, real targets): AdaGrad
        as it is, SGD's ``eta / sqrt(t)`` as ScaledSGD with ``power = 1/2``
        (``eta / (1 + t')^(1/2)``, t' the rows before; no shrinkage)."""
        reg = self.reg_
        reg.align_rows()
        b0 = 1.0 if reg.intercept else 0.0
        sgd_state = None
        if reg.solver == "sgd":
            sgd_state = np.array([1.0, float(reg.t), 0.0, 0.0, 0.0])
            opt = ScaledSGD(reg.W, sgd_state, reg.d, b0, reg.eta, 0.0, 0.5, 1.0)
        elif reg.solver == "row_adagrad":
            opt = RowAdaGrad(reg.W, reg.G, reg.d, b0, reg.eta, 1e-8)
        else:
            opt = AdaGrad(reg.W, reg.G, reg.d, b0, reg.eta, 1e-8)
        n = X.shape[0]
        yp, yi = Y.indptr, Y.indices
        xp, xi, xv = csr_arrays(X)
        # the core reads the targets, not the labels: a stream with no label
        # and as many label columns as W
        noy = (np.zeros(n + 1, np.int64), np.zeros(0, np.int32))
        weights = self._pending_weights
        for a in range(0, n, self.CHUNK):
            b = min(n, a + self.CHUNK)
            rows = np.arange(a, b) if order is None else np.asarray(order[a:b])
            wc = None if weights is None else weights[a:b]
            Yc = _dense_labels(yp, yi, rows, self.n_labels_)
            T = np.ascontiguousarray(self._targets(Yc))
            R = np.empty((b - a, reg.width)) if out is not None else None
            try:
                # In stream order a chunk's stream is its rows' slice of the
                # indptr: the stream's bounds check reads that chunk's entries,
                # not the whole block's once per chunk (~3k instructions a
                # rcv1-shaped row).
                if order is None:
                    stream = RowStream(xp[a:b + 1], xi, xv, X.shape[1], noy[0][:b - a + 1],
                                       noy[1], reg.width)
                else:
                    stream = RowStream(xp, xi, xv, X.shape[1], noy[0], noy[1], reg.width,
                                       order=rows.astype(np.int64))
                learn(opt, SquaredLoss(), stream, 1, R, targets=T, weights=wc)
            except NonFiniteError as exc:
                pos = a + exc.row
                k = int(rows[exc.row])
                # O-CS's label count takes the rows whose step was taken
                done = exc.row if exc.n_learned is None else int(exc.n_learned)
                self._decode_chunk(None, Yc[:done] if wc is None else Yc[:done][wc[:done] > 0],
                                   None if wc is None else wc[:done])
                raise NonFiniteError(
                    f"non-finite scores or weights (NaN or inf) at row {pos} of the block (row "
                    f"{k} of the data): the features are too large for this model's step; scale "
                    "them (e.g. omlc.preprocessing.MaxAbsScaler) or lower eta.", pos) from None
            finally:
                if sgd_state is not None:
                    reg.t = int(sgd_state[1])
                else:       # approximate on error; AdaGrad does not read t
                    reg.t += b - a if wc is None else int(np.count_nonzero(wc))
            D = self._decode_chunk(R, Yc if wc is None else Yc[wc > 0], wc)  # R: None if unwritten
            if out is not None:
                out[a:b] = D

    def _learn_ridge(self, X, Y, order, out):
        """The exact ridge, a chunk per compiled call (``ridge_learn``: the
        scores, the RLS step and its checks), the chunk's targets computed
        before it and its decoding after it in NumPy: the baselines' targets
        do not depend on their predictions. Weights as the per-row loop:
        the weighted least-squares step, a row of weight 0 only scored."""
        reg = self.reg_
        n = X.shape[0]
        yp, yi = Y.indptr, Y.indices
        xp, xi, xv = csr_arrays(X)
        weights = self._pending_weights
        for a in range(0, n, self.CHUNK):
            b = min(n, a + self.CHUNK)
            rows = np.arange(a, b, dtype=np.int64) if order is None else \
                np.asarray(order[a:b], np.int64)
            wc = None if weights is None else np.ascontiguousarray(weights[a:b], np.float64)
            Yc = _dense_labels(yp, yi, rows, self.n_labels_)
            T = np.ascontiguousarray(self._targets(Yc), np.float64)
            R = np.empty((b - a, reg.width)) if out is not None else None
            done, err, index = _lsk.ridge_learn(RowStream(xp, xi, xv, X.shape[1], order=rows),
                                                reg.W, reg.Ainv, reg.intercept, T, wc, R,
                                                self._ridge_block)
            learned = np.ones(done, bool) if wc is None else wc[:done] > 0
            reg.t += int(np.count_nonzero(learned))
            # the rows before an error were learned: their decoding (and
            # O-CS's label count) as if the chunk had ended there
            D = self._decode_chunk(None if R is None else R[:done], Yc[:done][learned],
                                   None if wc is None else wc[:done])
            if out is not None:
                out[a:a + done] = D
            if err:
                raise NonFiniteError(_ERRORS[err].format(pos=a + done, index=index, lam=self.lam),
                                     a + done)

    def _learn(self, X, Y, order, out):
        solver = getattr(self.reg_, "solver", None)
        if hasattr(self, "_targets") and solver == "ridge" and self.reg_.compiled_ridge():
            return self._learn_ridge(X, Y, order, out)
        if hasattr(self, "_targets") and solver in ("sgd", "adagrad", "row_adagrad"):
            return self._learn_chunked(X, Y, order, out)
        xp, xi, xv = csr_arrays(X)
        yp, yi = Y.indptr, Y.indices
        K = self.n_labels_
        rows = order if order is not None else range(X.shape[0])
        weights = self._pending_weights
        for pos, k in enumerate(rows):
            if weights is not None and weights[pos] == 0.0:
                if out is not None:
                    out[pos] = self._decision(X[k:k + 1])[0]
                continue
            a, b = xp[k], xp[k + 1]
            idx, vals = xi[a:b], np.asarray(xv[a:b], np.float64)
            y = np.zeros(K, bool)
            y[yi[yp[k]:yp[k + 1]]] = True
            try:
                if weights is None:
                    self._row(idx, vals, y, out[pos] if out is not None else None)
                else:
                    self._row(idx, vals, y, out[pos] if out is not None else None,
                              weight=float(weights[pos]))
            except (FloatingPointError, NonFiniteError) as exc:
                what = ("non-finite scores or weights (NaN or inf)"
                        if isinstance(exc, NonFiniteError) else str(exc))
                raise NonFiniteError(
                    f"{what} at row {pos} of the block (row {k} of the data): the features "
                    f"are too large for this model's lam={self.lam!r} (or lam too small); scale "
                    "them (e.g. omlc.preprocessing.MaxAbsScaler) or raise lam. The rows before "
                    "it were learned; that row was not.", pos) from None


# ----------------------------------------------------------------------------- DPP / CS-DPP

def _check_rule(name, value, cost, number, fixed, ok):
    """A decoding rule's parameter (``threshold`` / ``margin``): "auto",
    "adaptive" (which needs a named cost: it follows the learner's cost) or
    a number that ``ok`` accepts."""
    if isinstance(value, str):
        if value not in ("auto", "adaptive"):
            raise ValueError(f"{name} must be 'auto', 'adaptive' or {number}, got {value!r}")
        if value == "adaptive" and callable(cost):
            raise ValueError(f"{name}='adaptive' needs a named cost (one of {COSTS}); a "
                             f"callable cost {fixed}")
    elif isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not ok(value):
        raise ValueError(f"{name} must be 'auto', 'adaptive' or {number}, got {value!r}")


class CSDPP(_OnlineLSR):
    """Cost-sensitive dynamic principal projection (CS-DPP; Chu, Huang & Lin
    2019, "Dynamic principal projection for cost-sensitive online multi-label
    classification", Machine Learning 108).

    Online PCA of the cost-weighted label vectors ``C_t y_t`` (capped MSG plus
    the sampling step), online ridge regression onto the code space, decoding
    ``round(P^T r(x))`` (for the F1, accuracy and rank costs at an adaptive
    threshold, ``threshold="auto"``). See the module notes for the update
    order and the gap decisions.

    Parameters
    ----------
    cost : {"hamming", "rank", "f1", "accuracy"} or callable, default="f1"
        The cost the label weights of eq. (14) come from; a callable
        ``c(y, yhat)`` takes two boolean vectors and returns a number; it is
        called K + 1 times a row (O(K^2)) from the compiled loop, and an
        exception it raises stops the block before that row.
    code_dim : int, float or "auto", default="auto"
        M: an int, a fraction of K (``max(1, round(f K))``), or ``"auto"``:
        ``min(K, max(8, round(0.1 K)))`` (see :data:`AUTO_CODE_FLOOR`).
    basis : {"pbt", "pbc", "none"}, default="pbt"
    lam : float, default=1.0
        Ridge regularisation (the paper's lambda).
    solver : {"auto", "ridge", "sgd", "adagrad", "row_adagrad"}, default="auto"
        ``auto``: ridge while ``n_features + fit_intercept <= 2048``, else
        ``row_adagrad`` for ``basis="pbc"`` (the regression onto the K
        labels) and ``adagrad`` otherwise (onto the M code coordinates); see
        the module notes.
    eta : float or None, default=None
        Step of ``sgd`` (``eta/sqrt(t)``; None = 1) or ``adagrad`` /
        ``row_adagrad`` (None = ``0.1 / sqrt(K)``: see :meth:`_adagrad_scale`).
    fit_intercept : bool, default=True
    pca_step : float, default=1.0
        Multiplier of the online-PCA step: ``eta_t = pca_step (2/sqrt(t)) M/K``
        (1 = the paper's Sect. 5 setting); ``pca_step=K`` is the step on
        unscaled ±1 labels. From the start ``U = 0`` the paper's step already
        captures the label directions within a few rows.
    threshold : "auto", "adaptive" or float, default="auto"
        Where the decoded values are cut (a label is predicted iff its value
        exceeds the threshold; see "Decoding threshold" in the module notes).
        A float is on a ±1 label's scale (the decoded value times sqrt(K));
        0 is the paper's ``round``. ``"adaptive"``: each row is decoded at
        the threshold of :data:`THRESHOLD_GRID` that gave the least total
        cost (the learner's ``cost``) over the rows learned before it
        (follow the leader; the totals are ``thr_cost_``, the threshold in
        use ``threshold_``). ``"auto"``: adaptive for the F1, accuracy and
        rank costs, 0 for the Hamming cost (DPP) and for a callable cost.
        Only the reported label set moves: eq. (14)'s weights use the code's
        own decoding at 0, so what is learned does not depend on it.
    margin : "auto", "adaptive" or float, default="auto"
        A row-dependent addition to the threshold, ``kappa x^T A^-1 x`` on a
        ±1 label's scale (``x^T A^-1 x``: the exact ridge's predictive
        variance factor of the row before it is learned; see "Decoding
        margin" in the module notes). A float is kappa (>= 0; 0 is the
        paper's decoding). ``"adaptive"``: the kappa of :data:`MARGIN_GRID`
        of least total cost (the learner's ``cost``) over the rows learned
        before the row (follow the leader, ties to 0; totals
        ``margin_cost_``, kappa in use ``margin_``). ``"auto"``: adaptive
        for the Hamming cost (DPP) under the exact ridge with a fixed
        threshold, else 0: it takes DPP's one-pass Hamming loss on corel5k
        below predicting no label (15 orders: .00966 -> .00940, no label
        .00942) and moves the other shipped sets by -2.5% to +0.4% (DPP's
        F1 / accuracy / rank costs rise where it acts); CS-DPP's adaptive
        threshold leaves it nothing and the gradient solvers keep no
        ``A^-1``. A margin other than 0 needs the exact ridge
        (``solver="ridge"``, or ``"auto"`` below 2,048 features). Only the
        reported label set moves.
    random_state : int, Generator or None, default=0
        Seeds the initial basis and the sampling of P.

    Examples
    --------
    >>> import omlc
    >>> from omlc.datasets import make_multilabel_stream
    >>> X, Y = make_multilabel_stream(n_samples=300, n_features=100, n_labels=12, seed=0)
    >>> model = omlc.CSDPP(cost="f1", code_dim=4)
    >>> model.predict_then_learn(X, Y).shape
    (300, 12)
    >>> model.P_.shape
    (4, 12)
    """

    # Models from before the decoding threshold (issue 21) decode at the
    # paper's 0 and hold no threshold costs; those from before the decoding
    # margin take none.
    _LEGACY_STATE = {"threshold": 0.0, "thr_cost_": np.zeros(THRESHOLD_GRID.shape[0]),
                     "margin": 0.0, "margin_cost_": np.zeros(MARGIN_GRID.shape[0])}

    def __init__(self, cost="f1", code_dim="auto", basis="pbt", lam=1.0, solver="auto", eta=None,
                 fit_intercept=True, pca_step=1.0, threshold="auto", margin="auto",
                 random_state=0):
        self.cost = cost
        self.code_dim = code_dim
        self.basis = basis
        self.lam = lam
        self.solver = solver
        self.eta = eta
        self.fit_intercept = fit_intercept
        self.pca_step = pca_step
        self.threshold = threshold
        self.margin = margin
        self.random_state = random_state

    def _cost(self):
        return self.cost

    def _label_outputs(self):
        return self.basis == "pbc"

    def _adagrad_scale(self):
        """Gap filled here: AdaGrad moves a weight by up to ~eta a step
        whatever the gradient's scale, so its default step follows the
        targets' scale. O-BR's targets are +-1 (eta = 0.1); DPP's code is
        P (y / sqrt(K)), entries of order 1/sqrt(K), so eta = 0.1 / sqrt(K).
        With 0.1 the first steps overshoot the code and DPP predicts labels
        that are not there: on Mulan's rcv1subset1 (d = 47,236, K = 101, one
        pass) DPP's Hamming loss was .041 (PBT) and .116 (PBC) against .0285
        for predicting no label; with 0.1 / sqrt(K) .0276 and .0275, and on
        50k rcv1-shaped rows micro-F1 .48 -> .57 (PBT), .36 -> .57 (PBC).
        The paper's regressor is the exact ridge (no step)."""
        return 1.0 / math.sqrt(self.n_labels_)

    def _check_params(self):
        c = self._cost()
        if not callable(c) and c not in COSTS:
            raise ValueError(f"cost must be one of {COSTS} or a callable, got {c!r}")
        _check_dim(self.code_dim)
        positive_float("pca_step", self.pca_step)
        _check_rule("threshold", self.threshold, c, "a finite number",
                    "decodes at a fixed threshold", math.isfinite)
        _check_rule("margin", self.margin, c, "a finite number >= 0", "takes a fixed margin",
                    lambda v: math.isfinite(v) and v >= 0)
        if self.basis not in BASES:
            raise ValueError(f"basis must be one of {BASES}, got {self.basis!r}")
        self._check_common()

    def _init_state(self, n_features, n_labels):
        K = n_labels
        M = _resolve_dim(self.code_dim, K)
        self.code_dim_ = M
        self.rng_ = check_random_state(self.random_state).spawn(1)[0]
        self.full_rank_ = M >= K
        Mw = min(M, K)
        _check_dpp_size(type(self).__name__, Mw, K)
        # Fixed-size state (the compiled loop updates it in place): the basis
        # Qb_[:nq] with sigma sb_[:nq]; counters [nq, dropped row, t, folds].
        self.Qb_ = np.zeros((Mw + 1, K))
        self.sb_ = np.zeros(Mw + 1)
        self.cnt_ = np.array([0, -1, 0, 0], np.int64)
        self.F_ = np.eye(Mw)
        self.u_ = float(self.rng_.random())
        if self.full_rank_:
            self.proj_ = np.eye(K)
            self.sb_[:] = 1.0
        else:
            self._resample()
        width = K if self.basis == "pbc" else Mw
        self.reg_ = self._make_regressor(n_features, width)
        if self.reg_.solver != "ridge" and self._margin_rule() != 0.0:
            raise ValueError(f"margin={self.margin!r} needs the exact ridge's x^T A^-1 x; the "
                             f"solver is {self.reg_.solver!r} (solver='ridge', or margin=0.0)")
        # threshold="adaptive": each candidate's cost over the rows learned
        self.thr_cost_ = np.zeros(THRESHOLD_GRID.shape[0])
        # margin="adaptive": likewise
        self.margin_cost_ = np.zeros(MARGIN_GRID.shape[0])

    @property
    def Q_(self):
        """The online PCA's basis rows (at most M+1; none at the start)."""
        return self.Qb_[:self.cnt_[0]] if not self.full_rank_ else self.proj_

    @property
    def sigma_(self):
        return self.sb_[:self.cnt_[0]] if not self.full_rank_ else self.sb_[:-1]

    @property
    def drop_(self):
        return int(self.cnt_[1])

    @property
    def t_(self):
        return int(self.cnt_[2])

    @property
    def P_(self):
        """The current projection P_t (M x K): Q without the dropped row, zero
        rows while the basis fills."""
        self._check_fitted()
        return self.proj_

    def _resample(self):
        M, K = self.code_dim_, self.n_labels_
        drop = CappedMSG.sample(self.sigma_, self.u_, M)
        self.cnt_[1] = drop
        P = np.zeros((M, K))
        Q = self.Q_ if drop < 0 else np.delete(self.Q_, drop, axis=0)
        P[:Q.shape[0]] = Q          # zero rows while the basis is filling
        self.proj_ = P

    def _decode(self, R, P):
        if self.basis == "pbc":
            return (R @ P.T) @ P
        return R @ P

    def _adaptive(self):
        th = self.threshold
        return th == "adaptive" or (th == "auto" and self._cost() not in ("hamming",)
                                     and not callable(self._cost()))

    def _margin_rule(self):
        """"adaptive" or the fixed kappa (0.0: the paper's decoding)."""
        mg = self.margin
        if mg == "auto":
            solver = getattr(getattr(self, "reg_", None), "solver", None)
            return "adaptive" if (self._cost() == "hamming" and solver == "ridge"
                                  and not self._adaptive()) else 0.0
        return mg if isinstance(mg, str) else float(mg)

    def _kappa(self):
        rule = self._margin_rule()
        if rule == "adaptive":
            # the least total so far; ties go to the smallest margin
            return float(MARGIN_GRID[np.argmin(self.margin_cost_)])
        return rule

    @property
    def margin_(self):
        """The decoding margin's kappa now in use (a label is predicted iff
        its decoded value exceeds the threshold plus ``kappa x^T A^-1 x /
        sqrt(K)``): 0 for the paper's decoding, the fixed ``margin``, or the
        adaptive rule's current choice."""
        self._check_fitted()
        return self._kappa()

    @property
    def threshold_(self):
        """The decoding threshold now in use, on the decoded values' scale (a
        label is predicted iff its decoded value exceeds it): 0 for the
        paper's ``round``, the fixed ``threshold / sqrt(K)``, or the adaptive
        rule's current choice."""
        self._check_fitted()
        return self._theta()

    def _theta(self):
        if self._adaptive():
            # the least total so far; ties go to the index nearest 0
            t = self.thr_cost_
            best = np.flatnonzero(t <= t.min())
            j = best[np.argmin(np.abs(best - _GRID_ZERO))]
            return float(THRESHOLD_GRID[j]) / math.sqrt(self.n_labels_)
        th = self.threshold
        return 0.0 if isinstance(th, str) else float(th) / math.sqrt(self.n_labels_)

    def _learn(self, X, Y, order, out):
        rule = self._margin_rule()
        if not self._adaptive() and rule == 0.0:
            self._learn_block(X, Y, order, out)
            theta = self._theta()
            if out is not None and theta != 0.0:
                out -= theta
            return
        # The rules need every learned row's decoded values and labels, the
        # margin also its x^T A^-1 x (a fixed margin: only where reported).
        n, K = X.shape[0], self.n_labels_
        rows = np.arange(n, dtype=np.int64) if order is None else np.asarray(order, np.int64)
        need = self._adaptive() or rule == "adaptive" or out is not None
        step = max(n, 1) if out is not None or not need else _RULE_CHUNK  # n = 0: empty block
        for a in range(0, n, step):
            b = min(n, a + step)
            D = (out[a:b] if out is not None else np.empty((b - a, K))) if need else None
            g = np.empty(b - a) if need and rule != 0.0 else None
            try:
                self._learn_block(X, Y, order if b - a == n else rows[a:b], D, offset=a, gam=g)
            except NonFiniteError as exc:
                done = int(exc.row) - a
                if need:
                    self._decode_rules(D[:done], Y, rows[a:a + done],
                                       None if g is None else g[:done])
                raise
            if need:
                self._decode_rules(D, Y, rows[a:b], g)

    def _decode_rules(self, D, Y, rows, g):
        """The threshold (adaptive or fixed), then the margin (adaptive or
        fixed), on a block's decoded values in place."""
        if self._adaptive():
            self._follow(D, Y, rows)
        else:
            theta = self._theta()
            if theta != 0.0:
                D -= theta
        rule = self._margin_rule()
        if rule == "adaptive":
            self._follow_margin(D, Y, rows, g)
        elif rule != 0.0:
            D -= (rule / math.sqrt(self.n_labels_)) * g[:, None]

    def _follow_margin(self, D, Y, rows, g):
        """margin="adaptive" (see "Decoding margin"): each row lowered by the
        margin of least cost over the rows before it, then every candidate's
        cost of the row added to its total."""
        if not len(rows):
            return
        ip, ix = Y.indptr, Y.indices
        if ip.dtype != ix.dtype or ip.dtype not in (np.int32, np.int64):
            ip, ix = ip.astype(np.int64), ix.astype(np.int64)
        _lsk.margin_follow(D, ip, ix, np.ascontiguousarray(rows, np.int64), g,
                           self.margin_cost_, MARGIN_GRID, COST_IDS[self._cost()])

    def _follow(self, D, Y, rows):
        """threshold="adaptive" (see the class notes): each row's decoded values
        less the threshold of least cost over the rows before it, then the
        costs of the rows' own scores added to every candidate's total."""
        if not len(rows):
            return
        # compiled (in NumPy, tests/reference_label_space.threshold_follow,
        # it cost 3x FALT's whole step on rcv1-shaped rows); the same bits
        ip, ix = Y.indptr, Y.indices
        if ip.dtype != ix.dtype or ip.dtype not in (np.int32, np.int64):
            ip, ix = ip.astype(np.int64), ix.astype(np.int64)
        _lsk.threshold_follow(D, ip, ix, np.ascontiguousarray(rows, np.int64), self.thr_cost_,
                              THRESHOLD_GRID, _GRID_ZERO, COST_IDS[self._cost()])

    def _learn_block(self, X, Y, order, out, offset=0, gam=None):
        cost = self._cost()
        # a callable cost: the compiled loop calls it back for eq. 14's
        # weights (K + 1 calls a row, label_weights_callable), all else compiled
        cost_fn = functools.partial(label_weights_callable, cost) if callable(cost) else None
        reg = self.reg_
        if self.basis == "pbc":
            # W's K-wide rows on cache lines, as O-BR's (the loop reaches
            # them through the optimiser only); PBT's M-wide rows stay dense
            reg.align_rows()
        Mw = self.F_.shape[0]
        opt = None
        if reg.solver == "sgd":
            opt = SGD(reg.W, reg.d, 1.0 if reg.intercept else 0.0, reg.eta)
        elif reg.solver == "adagrad":
            opt = AdaGrad(reg.W, reg.G, reg.d, 1.0 if reg.intercept else 0.0, reg.eta, 1e-8)
        elif reg.solver == "row_adagrad":
            opt = RowAdaGrad(reg.W, reg.G, reg.d, 1.0 if reg.intercept else 0.0, reg.eta, 1e-8)
        done, err, index = _lsk.dpp_learn(
            self._stream(X, Y, order), COST_IDS["hamming" if cost_fn else cost],
            BASIS_IDS[self.basis], SOLVER_IDS[reg.solver], Mw, self.full_rank_,
            float(self.pca_step), self.u_, reg.intercept, reg.W, opt,
            reg.Ainv if reg.solver == "ridge" else None, self.F_, self.Qb_, self.sb_, self.proj_,
            self.cnt_, out=out, cost_fn=cost_fn, ridge_block=self._ridge_block, gam=gam)
        reg.t = self.t_
        if err:
            raise NonFiniteError(_ERRORS[err].format(pos=done + offset, index=index, lam=self.lam),
                                 done + offset)

    def _fold(self):
        """W <- W F, F <- I (the Python loop applies PBT's basis change directly)."""
        if not np.array_equal(self.F_, np.eye(self.F_.shape[0])):
            self.reg_.W[:] = self.reg_.W @ self.F_
            self.F_[:] = np.eye(self.F_.shape[0])

    def _row(self, idx, vals, y, out):
        # A refused step (FloatingPointError) leaves the whole learner as it
        # was before the row: the regressor checks before it writes, and the
        # online-PCA state is put back here.
        saved = (self.Qb_.copy(), self.sb_.copy(), self.cnt_.copy(), self.proj_, self.reg_.W)
        try:
            self._row_step(idx, vals, y, out)
        except (FloatingPointError, NonFiniteError):
            self.Qb_, self.sb_, self.cnt_, self.proj_, self.reg_.W = saved
            raise

    def _row_step(self, idx, vals, y, out):
        """The per-row loop in Python (numpy's eigh, QR): what a callable cost
        ran before the compiled loop called it back; kept as the loop the
        compiled one is checked against (tests/test_label_space_kernel.py).
        With ``basis="none"`` or PBT under a gradient solver it differs from
        the compiled loop by design (eigenvector signs; the lazy factor F)."""
        K = self.n_labels_
        P = self.P_
        r = self.reg_.scores_row(idx, vals)
        ytil = self._decode(r[None, :], P)[0]
        if not np.isfinite(ytil).all():
            raise FloatingPointError("non-finite scores (NaN or inf)")
        if out is not None:
            out[:] = ytil
        yhat = ytil > 0
        self.cnt_[2] += 1
        t = self.t_
        delta = label_weights(self._cost(), y, yhat)
        v = np.sqrt(delta) * np.where(y, 1.0, -1.0)
        if not self.full_rank_:
            M = self.code_dim_
            eta = float(self.pca_step) * 2.0 / math.sqrt(t) * M / K
            Q, sig = CappedMSG.step(self.Q_, self.sigma_, eta, v, M)
            if t % 1000 == 0 and Q.shape[0]:
                # rounding slowly breaks the rows' orthonormality
                q, _ = np.linalg.qr(Q.T)
                Q = np.ascontiguousarray(q.T * np.sign(np.sum(q.T * Q, axis=1))[:, None])
            n = Q.shape[0]
            self.Qb_[:n] = Q
            self.sb_[:n] = sig
            self.cnt_[0] = n
            self._resample()
        Pn = self.P_
        if self.basis == "pbc":
            self.reg_.step(idx, vals, v, r)
            return
        if self.basis == "pbt":
            Rm = P @ Pn.T
            self.reg_.transform(Rm)
            r = Rm.T @ r
        self.reg_.step(idx, vals, Pn @ v, r)

    def _decision(self, X):
        R = self.reg_.scores(X)
        if self.basis == "pbt" and not self.full_rank_:
            R = R @ self.F_
        D = _finite_scores(self._decode(R, self.P_))
        theta = self._theta()
        if theta != 0.0:
            D = D - theta
        kappa = self._kappa()
        if kappa != 0.0:
            D = D - (kappa / math.sqrt(self.n_labels_)) * _ridge_gamma(self.reg_, X)[:, None]
        return D


class DPP(CSDPP):
    """Dynamic principal projection (DPP; Chu, Huang & Lin 2019, "Dynamic
    principal projection for cost-sensitive online multi-label
    classification", Machine Learning 108): CS-DPP with the Hamming cost,
    i.e. online PCA of ``y / sqrt(K)``.

    Parameters are those of :class:`CSDPP` without ``cost``.

    Examples
    --------
    >>> import omlc
    >>> from omlc.datasets import make_multilabel_stream
    >>> X, Y = make_multilabel_stream(n_samples=300, n_features=100, n_labels=12, seed=0)
    >>> omlc.DPP(code_dim=0.25, basis="pbc").fit(X, Y).predict(X[:5]).shape
    (5, 12)
    """

    def __init__(self, code_dim="auto", basis="pbt", lam=1.0, solver="auto", eta=None,
                 fit_intercept=True, pca_step=1.0, threshold="auto", margin="auto",
                 random_state=0):
        self.code_dim = code_dim
        self.basis = basis
        self.lam = lam
        self.solver = solver
        self.eta = eta
        self.fit_intercept = fit_intercept
        self.pca_step = pca_step
        self.threshold = threshold
        self.margin = margin
        self.random_state = random_state

    def _cost(self):
        return "hamming"


# ----------------------------------------------------------------------------- baselines
class OnlineBR(_OnlineLSR):
    """Online binary relevance, O-BR of Chu, Huang & Lin (2019, "Dynamic
    principal projection for cost-sensitive online multi-label
    classification", Table 3): one online ridge regressor per label on ±1
    targets (all sharing ``A^-1``), relevant iff the output is > 0. Where
    the ridge cannot run (``solver="auto"``, more than 2048 features) the
    regressors learn by row-wise AdaGrad (see the module notes).
    ``random_state`` only seeds ``fit(..., shuffle=True)``'s row order.

    Examples
    --------
    >>> import omlc
    >>> from omlc.datasets import make_multilabel_stream
    >>> X, Y = make_multilabel_stream(n_samples=300, n_features=100, n_labels=6, seed=0)
    >>> omlc.OnlineBR().fit(X, Y).decision_function(X[:2]).shape
    (2, 6)
    """

    def __init__(self, lam=1.0, solver="auto", eta=None, fit_intercept=True, random_state=0):
        self.lam = lam
        self.solver = solver
        self.eta = eta
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    def _check_params(self):
        self._check_common()

    def _label_outputs(self):
        return True

    def _init_state(self, n_features, n_labels):
        self.reg_ = self._make_regressor(n_features, n_labels)

    _native_weights = True

    def _row(self, idx, vals, y, out, weight=1.0):
        r = self.reg_.scores_row(idx, vals)
        if out is not None:
            out[:] = r
        self.reg_.step(idx, vals, np.where(y, 1.0, -1.0), r, weight)

    def _targets(self, Yc):
        return np.where(Yc, 1.0, -1.0)

    def _decode_chunk(self, R, Yc, w=None):
        return R

    def _learn(self, X, Y, order, out):
        reg = self.reg_
        if not (reg.solver == "ridge" and reg.compiled_ridge()):
            return super()._learn(X, Y, order, out)
        # The whole block in one compiled call (scores, targets, the RLS step
        # and its checks): the Python loop cost ~15 us a row on top of the
        # O(d^2) step.
        weights = self._pending_weights
        done, err, index = _lsk.br_ridge_learn(self._stream(X, Y, order), reg.W, reg.Ainv,
                                               reg.intercept, weights, out, self._ridge_block)
        reg.t += done if weights is None else int(np.count_nonzero(weights[:done]))
        if err:
            raise NonFiniteError(_ERRORS[err].format(pos=done, index=index, lam=self.lam), done)

    def _decision(self, X):
        R, bad = self.reg_.scores_checked(X)
        if bad >= 0:
            _non_finite_scores(bad)
        return R


class OnlineRandomProjection(_OnlineLSR):
    """Online random projection, O-RAND of Chu, Huang & Lin (2019, "Dynamic
    principal projection for cost-sensitive online multi-label
    classification", Table 3): a static Gaussian encoding ``z = P_R y`` (y coded
    ±1), online ridge onto z, decoding ``round(pinv(P_R) r(x))``.

    Examples
    --------
    >>> import omlc
    >>> from omlc.datasets import make_multilabel_stream
    >>> X, Y = make_multilabel_stream(n_samples=300, n_features=100, n_labels=12, seed=0)
    >>> omlc.OnlineRandomProjection(code_dim=4).fit(X, Y).predict(X[:3]).shape
    (3, 12)
    """

    def __init__(self, code_dim="auto", lam=1.0, solver="auto", eta=None, fit_intercept=True,
                 random_state=0):
        self.code_dim = code_dim
        self.lam = lam
        self.solver = solver
        self.eta = eta
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    def _check_params(self):
        _check_dim(self.code_dim)
        self._check_common()

    def _init_state(self, n_features, n_labels):
        M = _resolve_dim(self.code_dim, n_labels)
        self.code_dim_ = M
        rng = check_random_state(self.random_state).spawn(1)[0]
        check_fits(8 * 3 * M * n_labels, f"{type(self).__name__}: the code matrices ({M:,} x "
                                        f"{n_labels:,} labels)")
        self.encoder_ = rng.normal(size=(M, n_labels)) / math.sqrt(M)
        self.decoder_ = np.linalg.pinv(self.encoder_)          # K x M
        self.reg_ = self._make_regressor(n_features, M)

    def _target(self, y):
        return self.encoder_ @ np.where(y, 1.0, -1.0)

    _native_weights = True

    def _row(self, idx, vals, y, out, weight=1.0):
        r = self.reg_.scores_row(idx, vals)
        if out is not None:
            out[:] = self._decode(r[None, :])[0]
        self.reg_.step(idx, vals, self._target(y), r, weight)

    def _decode(self, R):
        return R @ self.decoder_.T

    def _targets(self, Yc):
        return np.where(Yc, 1.0, -1.0) @ self.encoder_.T

    def _decode_chunk(self, R, Yc, w=None):
        return None if R is None else self._decode(R)

    def _decision(self, X):
        return _finite_scores(self._decode(self.reg_.scores(X)))


#: O-CS's tie in orthogonal matching pursuit: columns whose correlation with
#: the residual is within this relative distance of the largest are one
#: choice, and the first of them (lowest label id) is picked. Gap filled
#: here (Hsu et al. 2009 and Chu, Huang & Lin 2019 leave ties open): with
#: ``code_dim=1`` every column of the 1 x K encoder is parallel to every
#: other, so all K correlations ``|r a_j| / |a_j|`` are the same number to
#: within an ulp and a plain argmax picked the label the last bit of the
#: ridge scores pointed to -- a different one when the rows' updates of
#: A^-1 were grouped differently (rank-q against rank-one, another block
#: split). Parallel columns at any M tie the same way. Rounding moves a
#: correlation by ~1e-15 relative and the ridge scores by ~1e-12 between
#: block splits, far inside 1e-9; two columns of a Gaussian encoder that
#: are not parallel come within 1e-9 of each other with probability
#: ~1e-9 a step. Models from before it keep ``omp_tie_ = 0`` (the plain
#: argmax they were written with; omlc.persistence_checks).
OMP_TIE = 1e-9


def _omp_pick(c, tie):
    """The columns picked from correlations ``c`` (rows x K): the first
    within relative ``tie`` of each row's largest (0: NumPy's argmax, the
    first exact largest); and each row's largest, which the pursuit's stop
    test reads too."""
    top = c.max(axis=-1)
    if not tie:
        return np.argmax(c, axis=-1), top
    return np.argmax(c >= top[..., None] * (1.0 - tie), axis=-1), top


def omp(A, z, s, tie=OMP_TIE):
    """Orthogonal matching pursuit: a vector with at most ``s`` nonzeros whose
    image under ``A`` (M x K) approximates ``z`` (greedy, least-squares refit;
    ties within relative ``tie`` go to the first column, :data:`OMP_TIE`)."""
    K = A.shape[1]
    x = np.zeros(K)
    if s < 1:
        return x
    res = z.copy()
    support = []
    norms = np.linalg.norm(A, axis=0)
    norms[norms == 0] = 1.0
    coef = np.zeros(0)
    for _ in range(min(s, A.shape[0], K)):
        c = np.abs(A.T @ res) / norms
        c[support] = -1.0
        j, top = _omp_pick(c, tie)
        if top <= 1e-12:
            break
        support.append(int(j))
        coef = np.linalg.lstsq(A[:, support], z, rcond=None)[0]
        res = z - A[:, support] @ coef
    if support:
        x[support] = coef
    return x


def omp_rows(A, Z, s, tie=OMP_TIE):
    """:func:`omp` of every row of ``Z`` (n x M) at once: row ``i`` of the
    result is ``omp(A, Z[i], s, tie)`` to rounding. Each greedy step picks every
    still-active row's column in one product, and the least-squares refits
    of the rows' supports are one batched QR (the supports are linearly
    independent: a column in their span has no correlation with the
    residual and is never picked). A Python loop over rows paid ~2 ``lstsq``
    calls a row, most of O-CS's decoding time on the small Mulan sets."""
    M, K = A.shape
    Z = np.asarray(Z, np.float64)
    n = Z.shape[0]
    out = np.zeros((n, K))
    steps = min(s, M, K) if s >= 1 else 0
    if n == 0 or steps == 0:
        return out
    norms = np.linalg.norm(A, axis=0)
    norms[norms == 0] = 1.0
    At = np.ascontiguousarray(A.T)                   # K x M: column j is At[j]
    if n == 1:
        return _omp_one(A, At, norms, Z, steps, tie, out)
    active = np.arange(n)                            # rows whose pursuit goes on
    support = np.zeros((n, steps), np.intp)
    coef = np.zeros((n, 0))
    res = Z.copy()
    for k in range(steps):
        c = np.abs(res[active] @ A) / norms
        if k:
            np.put_along_axis(c, support[active, :k], -1.0, axis=1)
        j, top = _omp_pick(c, tie)
        go = top > 1e-12
        if k:
            # a row that stops keeps the coefficients of its last refit
            out[active[~go, None], support[active[~go], :k]] = coef[~go]
        active, j = active[go], j[go]
        if not len(active):
            return out
        support[active, k] = j
        S = At[support[active, :k + 1]].transpose(0, 2, 1)    # rows x M x (k+1)
        Q, Rq = np.linalg.qr(S)
        z = Z[active]
        coef = np.linalg.solve(Rq, np.matmul(Q.transpose(0, 2, 1), z[:, :, None]))[:, :, 0]
        res = np.zeros_like(Z)
        res[active] = z - np.matmul(S, coef[:, :, None])[:, :, 0]
    out[active[:, None], support[active]] = coef
    return out


def _omp_one(A, At, norms, Z, steps, tie, out):
    """omp_rows' loop for one row (a single-row decision): the same products
    and factorizations on arrays of the same shapes and layouts, so the same
    bits, without the bookkeeping of which rows go on (fancy indexing,
    put_along_axis: ~40% of a one-row decode)."""
    support = np.zeros(steps, np.intp)
    z = Z[[0]]
    res, coef = z, None
    for k in range(steps):
        c = np.abs(res @ A) / norms
        c[0, support[:k]] = -1.0
        j, top = _omp_pick(c, tie)
        if not top[0] > 1e-12:
            if k:
                out[0, support[:k]] = coef[0]
            return out
        support[k] = j[0]
        S = At[support[None, :k + 1]].transpose(0, 2, 1)        # 1 x M x (k+1)
        Q, Rq = np.linalg.qr(S)
        coef = np.linalg.solve(Rq, np.matmul(Q.transpose(0, 2, 1), z[:, :, None]))[:, :, 0]
        res = z - np.matmul(S, coef[:, :, None])[:, :, 0]
    out[0, support] = coef[0]
    return out


class OnlineCS(OnlineRandomProjection):
    """Online compressed sensing, O-CS of Chu, Huang & Lin (2019, "Dynamic
    principal projection for cost-sensitive online multi-label
    classification", Table 3), after Hsu, Kakade, Langford & Zhang (2009):
    a static Gaussian encoding of the 0/1 label vector, online ridge onto the
    code, decoding by orthogonal matching pursuit with sparsity ``sparsity``
    (None: the running mean label cardinality, rounded up) and a 0.5
    threshold: the decision value is the recovered vector minus 0.5. Ties in
    the pursuit's pick go to the first label (:data:`OMP_TIE`; with
    ``code_dim=1`` every label ties, so only the first can be predicted).

    Examples
    --------
    >>> import omlc
    >>> from omlc.datasets import make_multilabel_stream
    >>> X, Y = make_multilabel_stream(n_samples=300, n_features=100, n_labels=12, seed=0)
    >>> omlc.OnlineCS(code_dim=6).fit(X, Y).predict(X[:3]).shape
    (3, 12)
    """

    # Models from before the pursuit's tie rule: NumPy's argmax, as they predicted.
    _LEGACY_STATE = {"omp_tie_": 0.0}

    def __init__(self, code_dim="auto", sparsity=None, lam=1.0, solver="auto", eta=None,
                 fit_intercept=True, random_state=0):
        self.code_dim = code_dim
        self.sparsity = sparsity
        self.lam = lam
        self.solver = solver
        self.eta = eta
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    def _check_params(self):
        s = self.sparsity
        if s is not None and (isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 1):
            raise ValueError(f"sparsity must be a positive int or None, got {s!r}")
        super()._check_params()

    def _init_state(self, n_features, n_labels):
        super()._init_state(n_features, n_labels)
        self.n_relevant_ = 0
        self.n_coded_ = 0
        # the pursuit's tie (OMP_TIE); 0 in models from before it
        self.omp_tie_ = OMP_TIE

    def _target(self, y):
        self.n_relevant_ += int(y.sum())
        self.n_coded_ += 1
        return self.encoder_ @ y.astype(np.float64)

    def _targets(self, Yc):
        return Yc.astype(np.float64) @ self.encoder_.T

    def _decode_chunk(self, R, Yc, w=None):
        # each row decodes at the cardinality seen before it, as in _row; Yc
        # holds the learned rows' label sets (w: the chunk's weights, 0 for a
        # row only predicted)
        n = len(Yc) if w is None else len(w)
        learned = np.ones(n, bool) if w is None else w > 0
        card = np.zeros(n, np.int64)
        card[learned] = Yc.sum(axis=1)
        # the rows coded and the labels counted before each row
        coded = self.n_coded_ + (np.cumsum(learned, dtype=np.int64) - learned)
        seen = self.n_relevant_ + (np.cumsum(card) - card)
        self.n_relevant_ += int(card.sum())
        self.n_coded_ += int(np.count_nonzero(learned))
        if R is None:
            return None
        if self.sparsity is not None:
            return omp_rows(self.encoder_, R, int(self.sparsity), self.omp_tie_) - 0.5
        # ceil(seen / coded) in integers, at least 1 (1 before any row)
        s = np.where(coded > 0, np.maximum(1, -(-seen // np.maximum(coded, 1))), 1)
        out = np.empty((n, self.n_labels_))
        for v in np.unique(s):
            rows = np.flatnonzero(s == v)
            out[rows] = omp_rows(self.encoder_, R[rows], int(v), self.omp_tie_)
        return out - 0.5

    def _sparsity(self):
        if self.sparsity is not None:
            return int(self.sparsity)
        return max(1, math.ceil(self.n_relevant_ / self.n_coded_)) if self.n_coded_ else 1

    def _decode(self, R):
        return omp_rows(self.encoder_, R, self._sparsity(), self.omp_tie_) - 0.5
