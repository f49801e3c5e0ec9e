"""The plan stage, entered through ``front.make_plan``: finding items (collect, discover, pytest_collect),
estimating them (estimates), balancing them into shards (units, packing, shave, planner, choose), and showing
the plan (render) and its CI fan-out (matrix). Pure but for the finding."""
