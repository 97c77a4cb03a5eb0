"""Capacity planning: a discrete-event simulation of the engine (`atlas engine simulate`).

The real Scheduler and KVCacheManager decide every step, as in the engine; a step-cost model
fitted on this machine (cost_model.py, calibrate.py) says how long each step takes, so hours
of traffic are simulated in seconds (simulator.py) and the largest arrival rate meeting a
latency objective is found by bisection (planner.py).
"""
