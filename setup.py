"Packaging for this nbdev 2 project: every setting lives in settings.ini; edit there, not here."
from configparser import ConfigParser
import shlex, setuptools

_p = ConfigParser(delimiters=['='])
_p.read('settings.ini', encoding='utf-8')
cfg = _p['DEFAULT']
def reqs(key): return shlex.split(cfg.get(key, ''))
lib = cfg['lib_path']

setuptools.setup(
    name=cfg['lib_name'], version=cfg['version'], description=cfg['description'],
    author=cfg['author'], author_email=cfg['author_email'], license=cfg['license'],
    keywords=cfg['keywords'], url=cfg['git_url'], project_urls={'Source': cfg['git_url']},
    classifiers=['Programming Language :: Python :: 3', 'Intended Audience :: ' + cfg['audience'].title()],
    long_description=open('README.md', encoding='utf-8').read(), long_description_content_type='text/markdown',
    packages=setuptools.find_packages(include=[lib, lib + '.*']),
    include_package_data=True, zip_safe=False,
    python_requires='>=' + cfg['min_python'],
    install_requires=reqs('requirements'),
    extras_require={'dev': reqs('dev_requirements'), 'gpu': reqs('gpu_requirements'), 'ray': reqs('ray_requirements'),
                    'lucene': reqs('lucene_requirements')},
    entry_points={'console_scripts': cfg.get('console_scripts', '').split(),
                  'nbdev': [f'{lib}={lib}._modidx:d']},
)
