# The two commands of the README quick start (demo, test), and the notebook interface (lab, notebooks).
# Each installs what it needs into .venv first.
.PHONY: demo test lab notebooks figures install readme

demo: install          ## the main job: ETC vs DRAGIN on 10 2WikiMultihopQA questions (bundled model, closed corpus), comparison table, one question traced under both, then the committed reproduction's headline
	.venv/bin/etc_nb_run --dataset 2wikimultihopqa --method etc,dragin --n 10 --out runs/demo
	.venv/bin/etc_nb_show runs/demo
	.venv/bin/python -m etc_nb.headline

test: install          ## the test command CI runs: nbdev_test over every notebook
	bash tools/test.sh

lab: install           ## JupyterLab on the notebooks (nbs/), kernel "etc_nb (.venv)"; LAB_ARGS="--no-browser --port 8899" passes options
	.venv/bin/jupyter lab --notebook-dir=nbs $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

# The environment of tools/test.sh (offline, one math thread unless OMP_NUM_THREADS says otherwise, no warnings), .venv's
# console scripts on PATH, so the outputs are those nbdev_test sees.
notebooks:             ## re-execute every notebook in place through the etc_nb kernel (flagged cells keep their outputs), then nbdev_clean; NBS="nbs/17_runner.ipynb ..." for some
	bash tools/install.sh --browser
	PATH="$(CURDIR)/.venv/bin:$$PATH" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false PYTHONWARNINGS=ignore \
	OMP_NUM_THREADS=$${OMP_NUM_THREADS:-1} MKL_NUM_THREADS=$${MKL_NUM_THREADS:-1} .venv/bin/python tools/run_notebooks.py $(RUN_ARGS) $(NBS)

figures:               ## as `notebooks` on the experiment notebooks (3x_expt_*), without IN_TEST, so they also write figures/; NBS="nbs/35_expt_alpha.ipynb" for one
	$(MAKE) notebooks RUN_ARGS="--figures $(RUN_ARGS)" NBS="$(or $(NBS),$(wildcard nbs/3*_expt_*.ipynb))"

install:
	bash tools/install.sh

readme:                ## regenerate README.md from nbs/index.ipynb (re-executes index first)
	$(MAKE) notebooks NBS=nbs/index.ipynb && .venv/bin/python tools/nb2readme.py
