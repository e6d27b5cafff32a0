"""Few-shot CoT prompts of the 2WikiMultihopQA shape for `benchmarks/engine.py`.

The first six exemplars are DRAGIN's Appendix D (Prompt 1, from Trivedi et al. 2022); the others are written in the same
style for this benchmark so that the demos reach the ~1.5k tokens of the papers' prompts. Questions are the first dev
questions of 2WikiMultihopQA (HippoRAG's 1000-question split), contexts their gold passages from the same release.
"""
import ast, json

EXEMPLARS = [
    ("When did the director of film Hypocrite (Film) die?",
     "The film Hypocrite was directed by Miguel Morayta. Miguel Morayta died on 19 June 2013. So the answer is 19 June 2013."),
    ("Are both Kurram Garhi and Trojkrsti located in the same country?",
     "Kurram Garhi is located in the country of Pakistan. Trojkrsti is located in the country of Republic of Macedonia. "
     "Thus, they are not in the same country. So the answer is no."),
    ("Do director of film Coolie No. 1 (1995 Film) and director of film The Sensational Trial have the same nationality?",
     "Coolie No. 1 (1995 film) was directed by David Dhawan. The Sensational Trial was directed by Karl Freund. David "
     "Dhawan's nationality is India. Karl Freund's nationality is Germany. Thus, they do not have the same nationality. "
     "So the answer is no."),
    ("Who is Boraqchin (Wife Of Ögedei)'s father-in-law?",
     "Boraqchin is married to Ögedei Khan. Ögedei Khan's father is Genghis Khan. Thus, Boraqchin's father-in-law is "
     "Genghis Khan. So the answer is Genghis Khan."),
    ("Who was born first out of Martin Hodge and Ivania Martinich?",
     "Martin Hodge was born on 4 February 1959. Ivania Martinich was born on 25 July 1995. Thus, Martin Hodge was born "
     "first. So the answer is Martin Hodge."),
    ("When did the director of film Laughter In Hell die?",
     "The film Laughter In Hell was directed by Edward L. Cahn. Edward L. Cahn died on August 25, 1963. So the answer is "
     "August 25, 1963."),
    ("Which film came out first, Blind Shaft or The Mask Of Fu Manchu?",
     "Blind Shaft was released in 2003. The Mask Of Fu Manchu was released in 1932. Thus, The Mask Of Fu Manchu came "
     "out first. So the answer is The Mask Of Fu Manchu."),
    ("When did John V, Prince Of Anhalt-Zerbst's father die?",
     "John V, Prince of Anhalt-Zerbst was the son of Ernest I, Prince of Anhalt-Dessau. Ernest I, Prince of "
     "Anhalt-Dessau died on 12 June 1516. So the answer is 12 June 1516."),
    ("Which film has the director who was born later, El Extraño Viaje or Love In Pawn?",
     "The director of El Extraño Viaje is Fernando Fernán Gómez. He was born on 28 August 1921. The director of Love In "
     "Pawn is Charles Saunders. He was born on 8 April 1904. Thus, El Extraño Viaje has the director who was born later. "
     "So the answer is El Extraño Viaje."),
    ("Who is the paternal grandfather of Henry II Of England?",
     "The father of Henry II of England is Geoffrey Plantagenet, Count of Anjou. The father of Geoffrey Plantagenet is "
     "Fulk V, Count of Anjou. Thus, the paternal grandfather of Henry II of England is Fulk V, Count of Anjou. So the "
     "answer is Fulk V, Count of Anjou."),
    ("Where was the director of film The Fascist born?",
     "The Fascist was directed by Luciano Salce. Luciano Salce was born in Rome. So the answer is Rome."),
    ("Are Jerry Lewis and Dean Martin of the same nationality?",
     "Jerry Lewis was American. Dean Martin was American. Thus, they are of the same nationality. So the answer is yes."),
    ("Which country is the director of film Pather Panchali from?",
     "Pather Panchali was directed by Satyajit Ray. Satyajit Ray was from India. So the answer is India."),
    ("Who died first, Fred Astaire or Gene Kelly?",
     "Fred Astaire died on June 22, 1987. Gene Kelly died on February 2, 1996. Thus, Fred Astaire died first. So the "
     "answer is Fred Astaire."),
    ("What is the place of death of the composer of film Psycho (1960 Film)?",
     "The music of Psycho (1960 film) was composed by Bernard Herrmann. Bernard Herrmann died in Los Angeles. So the "
     "answer is Los Angeles."),
    ("Do both films Rashomon and Seven Samurai have the directors from the same country?",
     "Rashomon was directed by Akira Kurosawa. Seven Samurai was directed by Akira Kurosawa. Thus, both films have the "
     "director from the same country. So the answer is yes."),
    ("When was the mother of Louis XIV Of France born?",
     "The mother of Louis XIV of France is Anne of Austria. Anne of Austria was born on 22 September 1601. So the answer "
     "is 22 September 1601."),
    ("Which film has the director born first, Vertigo or Chinatown?",
     "Vertigo was directed by Alfred Hitchcock. Alfred Hitchcock was born on 13 August 1899. Chinatown was directed by "
     "Roman Polanski. Roman Polanski was born on 18 August 1933. Thus, Vertigo has the director born first. So the "
     "answer is Vertigo."),
    ("What nationality is the performer of song Imagine (John Lennon Song)?",
     "Imagine was performed by John Lennon. John Lennon was British. So the answer is British."),
    ("Who was born later, Pablo Picasso or Salvador Dalí?",
     "Pablo Picasso was born on 25 October 1881. Salvador Dalí was born on 11 May 1904. Thus, Salvador Dalí was born "
     "later. So the answer is Salvador Dalí."),
    ("What is the date of death of the director of film Metropolis (1927 Film)?",
     "Metropolis (1927 film) was directed by Fritz Lang. Fritz Lang died on 2 August 1976. So the answer is 2 August 1976."),
    ("Who is the spouse of the director of film The Piano?",
     "The Piano was directed by Jane Campion. Jane Campion is married to Colin Englert. So the answer is Colin Englert."),
]

DEMOS = ''.join(f"Question: {q}\nAnswer: {a}\n\n" for q, a in EXEMPLARS)

def case(question:str)->str: return f"Question: {question}\nAnswer:"

def context_block(passages:list)->str:
    "The retrieval block of DRAGIN/ETC prompts (`04b_released_code`)"
    return "Context:\n" + ''.join(f"[{i+1}] {p}\n" for i, p in enumerate(passages)) + "Answer in the same format as before.\n"

def questions(n:int)->list:
    "The first `n` dev questions, each with up to 3 gold passages (title match on the evidence subjects, first 100 words)"
    from etc_nb.core import find_data      # imported here: etc_nb.core needs spaCy, the prompts alone do not
    qs = json.load(open(find_data('2wikimultihopqa/hipporag_2wikimultihopqa_dev1000_questions.json')))[:n]
    corpus = {d['title']: d['text'] for d in json.load(open(find_data('2wikimultihopqa/hipporag_2wikimultihopqa_corpus.json')))}
    out = []
    for q in qs:
        ev = ast.literal_eval(q['evidence']) if isinstance(q['evidence'], str) else q['evidence']
        subjects = list(dict.fromkeys(t[0] for t in ev))
        docs = [' '.join(corpus[s].split()[:100]) for s in subjects if s in corpus][:3]   # DPR-like 100-word passages
        out.append(dict(question=q['question'], answer=q['answer'], passages=docs or [q['question']]))
    return out
