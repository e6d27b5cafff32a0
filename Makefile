# The two commands of the README quick start. Each installs what it needs into .venv first.
.PHONY: demo test install readme

demo: install          ## the main job: ETC vs DRAGIN on 10 2WikiMultihopQA questions (bundled model, closed corpus), comparison table
	.venv/bin/etc_nb_run --dataset 2wikimultihopqa --method etc,dragin --n 10 --out runs/demo

test: install          ## the test command CI runs: nbdev_test over every notebook
	bash tools/test.sh

install:
	bash tools/install.sh

readme:                ## regenerate README.md from nbs/index.ipynb (re-executes index first)
	.venv/bin/python tools/nbtool.py run nbs/index.ipynb && .venv/bin/nbdev_clean && .venv/bin/python tools/nb2readme.py
