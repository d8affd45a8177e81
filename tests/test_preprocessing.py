"""omlc.preprocessing: streaming scalers, online (prequential) semantics, sklearn use."""
import numpy as np
import pytest
import scipy.sparse as sp

import omlc
from omlc import evaluate
from omlc.preprocessing import MaxAbsScaler, MinMaxScaler, ScaledLearner, make_scaler


def _data(n=60, d=9, seed=0, density=0.5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.01, 300, d) + rng.uniform(-50, 50, d)
    X[rng.random(X.shape) > density] = 0.0
    return X


@pytest.mark.parametrize("make", [MaxAbsScaler, lambda: MinMaxScaler((-1.0, 1.0))])
def test_stream_transform_uses_only_rows_up_to_each_row(make):
    X = _data()
    out = np.vstack([make().stream_transform(X[:1])] +
                    [make().fit(X[:i + 1]).transform(X[i:i + 1]) for i in range(1, len(X))])
    s = make()
    streamed = np.vstack([s.stream_transform(X[:17]), s.stream_transform(X[17:40]),
                          s.stream_transform(X[40:])])
    np.testing.assert_allclose(streamed, out, rtol=0, atol=1e-12)
    # No peeking: changing later rows leaves earlier outputs alone.
    Z = X.copy()
    Z[30:] *= 1000.0
    np.testing.assert_array_equal(make().stream_transform(Z)[:30], streamed[:30])
    # Every row lies in the target range of the statistics it was scaled with.
    assert streamed.min() >= -1.0 and streamed.max() <= 1.0
    assert s.n_samples_seen_ == len(X)


def test_block_size_does_not_change_the_stream():
    X = _data(seed=1)
    whole = MaxAbsScaler().stream_transform(X)
    s = MaxAbsScaler()
    rows = np.vstack([s.stream_transform(X[i:i + 1]) for i in range(len(X))])
    np.testing.assert_array_equal(whole, rows)


def test_maxabs_sparse_matches_dense_and_keeps_structure():
    X = _data(n=80, d=15, seed=2, density=0.2)
    S = sp.csr_matrix(X)
    s = MaxAbsScaler()
    out = sp.vstack([s.stream_transform(S[:25]), s.stream_transform(S[25:])]).tocsr()
    np.testing.assert_array_equal(out.indptr, S.indptr)
    np.testing.assert_array_equal(out.indices, S.indices)
    np.testing.assert_allclose(out.toarray(), MaxAbsScaler().stream_transform(X), atol=1e-15)
    np.testing.assert_allclose(s.max_abs_, np.abs(X).max(axis=0))
    batch = MaxAbsScaler().fit(S).transform(S)
    assert sp.issparse(batch)
    np.testing.assert_allclose(batch.toarray(), X / np.abs(X).max(axis=0))


def test_minmax_values_and_sparse_input():
    X = np.array([[0.0, 5.0], [10.0, 5.0], [5.0, 5.0]])
    s = MinMaxScaler().fit(X)
    np.testing.assert_allclose(s.transform(X), [[0.0, 0.0], [1.0, 0.0], [0.5, 0.0]])
    np.testing.assert_allclose(s.transform([[20.0, 5.0]]), [[2.0, 0.0]])
    np.testing.assert_allclose(MinMaxScaler(clip=True).fit(X).transform([[20.0, 5.0]]), [[1.0, 0.0]])
    np.testing.assert_allclose(MinMaxScaler((-1, 1)).fit(X).transform(X)[:, 0], [-1.0, 1.0, 0.0])
    # Sparse input is densified (zeros move) and comes back as CSR.
    out = MinMaxScaler((-1, 1)).fit_transform(sp.csr_matrix(X))
    assert sp.issparse(out)
    np.testing.assert_allclose(out.toarray()[:, 0], [-1.0, 1.0, 0.0])
    with pytest.raises(ValueError, match="feature_range"):
        MinMaxScaler((1, 0)).fit(X)


def test_errors():
    with pytest.raises(ValueError, match="3 features"):
        MaxAbsScaler().fit(np.ones((2, 2))).transform(np.ones((2, 3)))
    with pytest.raises(ValueError, match="non-finite"):
        MaxAbsScaler().fit([[np.nan, 1.0]])
    with pytest.raises(omlc.NotFittedError):
        MaxAbsScaler().transform(np.ones((1, 2)))
    with pytest.raises(ValueError, match="unknown scaler"):
        make_scaler("zscore")


def test_params_and_sklearn_pipeline():
    pytest.importorskip("sklearn")
    from sklearn.base import clone
    from sklearn.pipeline import Pipeline
    s = MinMaxScaler(feature_range=(-1.0, 1.0))
    assert s.get_params() == {"feature_range": (-1.0, 1.0), "clip": False}
    assert clone(s).get_params() == s.get_params()
    assert s.set_params(clip=True).clip is True
    with pytest.raises(ValueError):
        s.set_params(nope=1)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 6)) * [1, 10, 100, 1000, 0.1, 0.01]
    Y = (X / [1, 10, 100, 1000, 0.1, 0.01] > 0.3).astype(int)[:, :4]
    from sklearn.linear_model import LogisticRegression
    from sklearn.multiclass import OneVsRestClassifier
    for scaler, data in ((MaxAbsScaler(), sp.csr_matrix(X)), (MinMaxScaler(), X)):
        pipe = Pipeline([("scale", scaler), ("clf", OneVsRestClassifier(LogisticRegression()))])
        pipe.fit(data, Y)
        P = pipe.predict(data)
        assert P.shape == Y.shape
        assert (np.asarray(P) == Y).mean() > 0.9    # learnable once scaled
        fitted = pipe.named_steps["scale"]
        assert fitted.n_samples_seen_ == 400 and fitted is scaler
        clone(pipe)                                 # sklearn can copy it (grid search does)


def test_scaled_learner_is_the_online_pipeline():
    rng = np.random.default_rng(3)
    X = sp.csr_matrix(_data(n=300, d=12, seed=3, density=0.4))
    Y = sp.csr_matrix((rng.random((300, 4)) < 0.3).astype(np.int32))
    res = evaluate.prequential(ScaledLearner(omlc.FALT(), "maxabs"), (X, Y),
                               metrics=("hamming_loss",), block_size=7, progress=False)
    # By hand: scale the whole stream online, then the plain learner.
    ref = evaluate.prequential(omlc.FALT(), (MaxAbsScaler().stream_transform(X), Y),
                               metrics=("hamming_loss",), block_size=64, progress=False)
    assert res.metrics == ref.metrics
    m = ScaledLearner(omlc.FALT(), MinMaxScaler()).fit(X.toarray(), Y)
    assert m.predict(X.toarray()).shape == Y.shape
    assert m.get_params()["scaler"].feature_range == (0.0, 1.0)


def test_docstring_examples_run():
    import doctest
    import omlc.preprocessing
    assert doctest.testmod(omlc.preprocessing).failed == 0


# ------------------------------------- scikit-learn's transformer conventions (issue 27)

@pytest.mark.parametrize("make", [MaxAbsScaler, lambda: MinMaxScaler((-1, 1))],
                         ids=["maxabs", "minmax"])
def test_scalers_invert_name_their_columns_and_refuse_complex_and_1d(make):
    rng = np.random.default_rng(0)
    A = rng.normal(size=(30, 4)) * [1, 10, 100, 0]
    s = make().fit(A)
    np.testing.assert_allclose(s.inverse_transform(s.transform(A)), A, atol=1e-9)
    S = sp.csr_matrix(A)
    back = s.inverse_transform(s.transform(S))
    assert sp.issparse(back)
    np.testing.assert_allclose(back.toarray(), A, atol=1e-9)
    assert list(s.get_feature_names_out()) == ["x0", "x1", "x2", "x3"]
    with pytest.raises(ValueError, match="Complex"):
        make().fit(A.astype(complex))
    with pytest.raises(ValueError, match="Reshape"):
        s.transform(A[0])
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(A, columns=list("abcd"))
    s = make().fit(df)
    assert list(s.get_feature_names_out()) == list("abcd")
    with pytest.raises(ValueError, match="feature names should match"):
        s.transform(df[list("badc")])


def test_scalers_pass_scikit_learns_transformer_checks():
    pytest.importorskip("sklearn")
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    from omlc.preprocessing import MaxAbsScaler
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(np.arange(12.0).reshape(4, 3), columns=["u", "v", "w"])
    pipe = make_pipeline(MaxAbsScaler(), FunctionTransformer(feature_names_out="one-to-one"))
    pipe.fit(df)
    assert list(pipe.get_feature_names_out()) == ["u", "v", "w"]
