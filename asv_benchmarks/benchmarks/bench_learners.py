"""End-to-end prequential passes through ``omlc.evaluate.prequential`` on an
rcv1-like stream (learner + metrics + block slicing of the memory-mapped
cache), with the resulting quality tracked so a speed-up that breaks learning
shows in the history.
"""
import time

from . import common

_METRICS = ("micro_f1", "hamming_loss", "ranking_loss")


class PrequentialRcv1Like:
    number = 1
    repeat = 1
    rounds = 1
    warmup_time = 0
    timeout = 900
    param_names = ["learner"]
    params = [list(common.LEARNERS)]

    def setup_cache(self):
        # Generated into omlc's cache once per machine; later runs reopen it.
        warm = common.rcv1_like(common.RCV1_WARM, stream="train")
        test = common.rcv1_like(common.RCV1_BLOCK, stream="test")
        return warm.meta["cache_dir"], test.meta["cache_dir"]

    def setup(self, entries, learner):
        from omlc.io.cache import open_cache
        self.warm, self.test = (open_cache(e) for e in entries)
        self._result = None

    def _run(self, learner):
        from omlc.evaluate import prequential
        model = common.make_learner(learner)
        t0 = time.perf_counter()
        res = prequential(model, self.test, pretrain=self.warm, metrics=_METRICS)
        return res, time.perf_counter() - t0

    def time_prequential(self, entries, learner):
        self._run(learner)

    def track_rows_per_second(self, entries, learner):
        res, _ = self._run(learner)
        return res.rows_per_second

    track_rows_per_second.unit = "rows/s"

    def track_micro_f1(self, entries, learner):
        return self._run(learner)[0].metrics["micro_f1"]

    track_micro_f1.unit = "micro-F1"

    def track_ranking_loss(self, entries, learner):
        return self._run(learner)[0].metrics["ranking_loss"]

    track_ranking_loss.unit = "ranking loss"
