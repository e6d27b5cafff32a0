# The two commands of the README quick start. Each installs what it needs into .venv first.
.PHONY: demo test install readme

demo: install          ## run the main job on the embedded defaults (bundled model, bundled data)
	.venv/bin/etc_nb_smoke

test: install          ## the test command CI runs: nbdev_test over every notebook
	bash tools/test.sh

install:
	bash tools/install.sh

readme:                ## regenerate README.md from nbs/index.ipynb (re-executes index first)
	.venv/bin/python tools/nbtool.py run nbs/index.ipynb && .venv/bin/nbdev_clean && .venv/bin/python tools/nb2readme.py
