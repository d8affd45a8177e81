"""How omlc's learners fit into scikit-learn (an optional dependency).

Every learner (:class:`omlc.learners.base.BaseLearner`) follows scikit-learn's
estimator conventions without importing scikit-learn:

- parameters in ``__init__`` only, ``get_params``/``set_params``, so
  ``sklearn.base.clone`` works;
- tags (``__sklearn_tags__`` for scikit-learn >= 1.6, ``_more_tags`` before):
  a classifier whose target is a required 2-D label indicator (multi-label,
  not single-output), sparse or dense 2-D input, no NaN;
- ``classes_`` = the label columns ``0..L-1`` (scikit-learn's scorers read it);
- ``score(X, y)`` = micro-averaged F1 (not subset accuracy, scikit-learn's
  classifier default: see :meth:`~omlc.learners.base.BaseLearner.score`);
- ``predict`` returns a CSR 0/1 indicator, which scikit-learn's multi-label
  metrics accept (``scoring="f1_micro"``, ``"f1_samples"``, ``"f1_macro"``,
  ``"jaccard_samples"``, ...); ``decision_function`` returns dense scores
  (``scoring="roc_auc"``, ``"average_precision"``).

So ``GridSearchCV``, ``RandomizedSearchCV``, ``cross_val_score``,
``cross_validate`` and ``Pipeline`` (``MaxAbsScaler``, ``TfidfTransformer``,
``HashingVectorizer`` upstream...) work. ``fit`` is one online pass from a fresh
state (``fit(X, y, shuffle=True)`` shuffles with ``random_state``).

One scikit-learn limitation: ``cross_val_score``/``cross_validate`` (1.9)
validate ``y`` as "array-like" and refuse a SciPy sparse ``y``; pass
``Y.toarray()`` there (``GridSearchCV``/``RandomizedSearchCV`` take the sparse
``Y``).

scikit-learn's estimator checks
-------------------------------
``sklearn.utils.estimator_checks.check_estimator`` runs its whole suite on a
learner; the checks below fail by design, for the reasons given, and the test
suite (tests/test_sklearn.py) asserts that nothing else fails, for every
registered learner. Most of them feed a single-output (binary or multiclass,
1-D) ``y``, which a multi-label learner does not model; the rest test
conventions omlc chose differently on purpose.
"""

#: check name -> why it does not apply to omlc's learners.
NOT_APPLICABLE = {
    # single-output targets (1-D y: binary, multiclass, strings, regression)
    "check_classifiers_train": "trains on 1-D binary/multiclass y; omlc learns 2-D label "
                               "indicators only (tags: single_output=False)",
    "check_classifiers_one_label": "1-D y with one class",
    "check_classifiers_one_label_sample_weights": "1-D y with one class",
    "check_sample_weights_pandas_series": "1-D multiclass y (values 1/2)",
    "check_sample_weights_not_an_array": "1-D multiclass y (values 1/2)",
    "check_sample_weights_shape": "1-D multiclass y (values 1/2)",
    "check_sample_weights_not_overwritten": "1-D multiclass y (values 1/2)",
    "check_sample_weight_equivalence_on_dense_data": "compares weights with the repeated rows "
                                                     "in another order; an online learner "
                                                     "depends on the order, and the linear "
                                                     "learners scale the gradient instead of "
                                                     "repeating (omlc's tests check weights "
                                                     "against the NumPy twins)",
    "check_sample_weight_equivalence_on_sparse_data": "as on dense data",
    "check_classifiers_classes": "1-D y of string class names; omlc's labels are columns",
    "check_classifier_not_supporting_multiclass": "fits 1-D multiclass y and expects the "
                                                  "binary-only error message",
    "check_estimators_dtypes": "1-D multiclass y (values 0/1/2) turned into a 2-D target; "
                               "omlc refuses a label indicator with a 2",
    "check_fit2d_1feature": "same 0/1/2-valued target as check_estimators_dtypes",
    "check_classifier_data_not_an_array": "same 0/1/2-valued target (X as an array-like is "
                                          "accepted)",
    # CSR output and omlc's label-list input
    "check_classifiers_multilabel_output_format_predict": "expects a dense ndarray from "
                                                           "predict; omlc returns CSR (sparse "
                                                           "label sets at scale)",
    "check_classifier_multioutput": "compares predict's output as a dense array (CSR here)",
    "check_classifiers_multilabel_representation_invariance": "passes y as a list of 0/1 "
                                                              "rows (read as an indicator) "
                                                              "but compares predict's CSR "
                                                              "output as a dense array",
    # omlc's own conventions
    "check_do_not_raise_errors_in_init_or_set_params": "set_params validates at once and "
                                                      "leaves the learner unchanged on a bad "
                                                      "value (documented behaviour)",
    "check_estimators_empty_data_messages": "zero rows is a valid (empty) stream for an "
                                            "online learner",
    "check_non_transformer_estimators_n_iter": "RankSVM's batch solver has max_iter but "
                                               "reports no n_iter_",
    "check_array_api_input": "skipped by scikit-learn unless SCIPY_ARRAY_API=1",
}
