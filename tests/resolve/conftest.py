"""A small vLLM-shaped project written as index facts."""

from __future__ import annotations

import pytest

from analyzer.index.models import ModuleFacts
from resolve.factkit import M, acc, asg, call, cls, fn, imp, meth, module


def engine_facts() -> list[ModuleFacts]:
    init = module("eng/__init__.py", imports=[imp("core.scheduler", "Scheduler", level=1)], all_names=["Scheduler"])
    core_init = module("eng/core/__init__.py", imports=[imp("kv", "*", level=1)])
    kv = module(
        "eng/core/kv.py",
        all_names=["BlockPool", "KVCacheManager"],
        classes=[
            cls("BlockPool"),
            cls(
                "KVCacheManager",
                inst=[
                    asg("self.pool", "KVCacheManager.__init__", "pool"),
                    asg("self.block_pool", "KVCacheManager.__init__", "BlockPool()"),
                ],
            ),
        ],
        functions=[
            meth("BlockPool.get_blocks", returns="list[int]"),
            meth("BlockPool.free"),
            meth("BlockPool.num_free", prop=True, returns="int"),
            meth("KVCacheManager.__init__", "pool: 'BlockPool'"),
            meth("KVCacheManager.allocate_slots"),
        ],
        calls=[
            call("BlockPool", "KVCacheManager.__init__", 5),
            call("self.block_pool.get_blocks", "KVCacheManager.allocate_slots", 10),
            call("self.pool.free", "KVCacheManager.allocate_slots", 11),
        ],
        accesses=[acc("self.block_pool", "num_free", "read", "KVCacheManager.allocate_slots", 12)],
    )
    sched = module(
        "eng/core/scheduler.py",
        imports=[
            imp("functools"),
            imp("abc", "ABC"),
            imp("typing", "Optional"),
            imp("typing", "TYPE_CHECKING"),
            imp("eng.core", "KVCacheManager"),
            imp("kv", "BlockPool", level=1, type_checking=True),
        ],
        classes=[
            cls("SchedulerInterface", "ABC"),
            cls(
                "Scheduler",
                "SchedulerInterface",
                inst=[
                    asg("self.kv_cache_manager", "Scheduler.__init__", "KVCacheManager(pool)"),
                    asg("self.cb", "Scheduler.__init__", "functools.partial(self.helper, 1)"),
                    asg("self.hook", "Scheduler.__init__", "module_hook"),
                    asg("self.maybe_pool", "Scheduler.__init__", "None", "Optional[BlockPool]"),
                ],
            ),
            cls("Child", "Scheduler"),
        ],
        functions=[
            meth("SchedulerInterface.schedule"),
            meth("SchedulerInterface.reset"),
            meth("Scheduler.__init__", "pool"),
            meth("Scheduler.schedule"),
            meth("Scheduler.helper", "n: int", "pool: 'BlockPool | None' = None"),
            meth("Scheduler.make", classmethod=True, returns="'Scheduler'"),
            meth("Child.schedule"),
            fn("module_hook"),
        ],
        calls=[
            call("KVCacheManager", "Scheduler.__init__", 3),
            call("functools.partial", "Scheduler.__init__", 4),
            call("self.kv_cache_manager.allocate_slots", "Scheduler.schedule", 20),
            call("self.reset", "Scheduler.schedule", 21),
            call("super().schedule", "Scheduler.schedule", 22),
            call("self.cb", "Scheduler.schedule", 23),
            call("self.hook", "Scheduler.schedule", 24),
            call("self.maybe_pool.free", "Scheduler.schedule", 25),
            call("pool.free", "Scheduler.helper", 30),
            call("cls", "Scheduler.make", 40),
            call("super().schedule", "Child.schedule", 50),
        ],
        accesses=[acc("self", "waiting", "mutating_call", "Scheduler.schedule", 26, "append")],
    )
    main = module(
        "eng/main.py",
        imports=[imp("eng.core.scheduler", None, "sched_mod"), imp("eng", "Scheduler"), imp("os")],
        module_attributes=[asg("SCHED", M, "Scheduler(None)"), asg("HANDLERS", M, "{'a': helper, 'b': run}")],
        functions=[fn("run"), fn("helper", returns="Scheduler"), fn("outer"), fn("outer.inner")],
        assignments=[
            asg("s", "run", "helper()", line=2),
            asg("f", "run", "lambda: None", line=3),
        ],
        calls=[
            call("Scheduler", M, 1),
            call("SCHED.schedule", "run", 10),
            call("sched_mod.Scheduler.make", "run", 11),
            call("s.helper", "run", 12),
            call("os.path.join", "run", 13),
            call("print", "run", 14),
            call("mystery.allocate_slots", "run", 15),
            call("mystery.schedule", "run", 16),
            call("mystery.frobnicate", "run", 17),
            call("HANDLERS[key]", "run", 18),
            call("f", "run", 19),
            call("inner", "outer", 20),
            call("sched_mod.Scheduler.make().schedule", "run", 21),
        ],
    )
    return [init, core_init, kv, sched, main]


@pytest.fixture
def facts() -> list[ModuleFacts]:
    return engine_facts()
