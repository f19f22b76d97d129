"""Training templates of the support combiner: plain cases and hedges, written for it.

Each template is a short context with claims a reader decides at a glance: ``supported`` (copied,
reduced, paraphrased or hedged) and ``contradicted`` (an entity, a number, a date, the negation or
a comparison swapped, or a hedge around a wrong statement). ``scripts/train_local_combiner.py``
adds their feature rows (computed by the judge itself, verifier included) to the dev-set rows.
They teach what the dev files rarely show: a paraphrase that the verifier entails confidently
while sharing few words with the context is supported, and a sentence that copies the context's
words but swaps a fact, which the verifier confidently rejects, is not.

Written for this purpose (no data set's text); none of the sentences is a case of the plain-case
or hedge tests (``tests/local/data/``), whose topics they avoid.
"""

from __future__ import annotations

TEMPLATES_EN: list[dict[str, object]] = [
    {
        "context": "The Harbour Point lighthouse was built in 1874 on a granite cliff north of the town. "
        "Its lamp was electrified in 1931, and the keepers left in 1968.",
        "supported": [
            "The Harbour Point lighthouse was built in 1874.",
            "The lighthouse stands on a granite cliff.",
            "The light has been electric since 1931.",
            "No keepers have lived there since 1968.",
            "I think the lighthouse was built in 1874.",
        ],
        "contradicted": [
            "The Harbour Point lighthouse was built in 1894.",
            "The lighthouse stands on a sandstone cliff.",
            "The lamp was electrified in 1913.",
            "The keepers never left the lighthouse.",
            "I'm not sure, but it was probably built in 1921.",
        ],
    },
    {
        "context": "Mount Kenya is the highest mountain in Kenya and the second highest in Africa. "
        "Its main peak, Batian, rises to 5,199 metres.",
        "supported": [
            "Mount Kenya is the highest mountain in Kenya.",
            "Only one mountain in Africa is higher than Mount Kenya.",
            "Batian is 5,199 metres high.",
        ],
        "contradicted": [
            "Mount Kenya is the highest mountain in Africa.",
            "Batian rises to 4,199 metres.",
            "Mount Kenya is the lowest mountain in Kenya.",
            "The main peak of Mount Kenya is called Nelion.",
        ],
    },
    {
        "context": "The city council approved the new cycling lanes on Monday by nine votes to four. "
        "Work will start in March and cost about 2.4 million euros.",
        "supported": [
            "The council approved the cycling lanes.",
            "The vote was nine to four.",
            "Construction begins in March.",
            "The lanes will cost roughly 2.4 million euros.",
            "If I remember correctly, work starts in March.",
        ],
        "contradicted": [
            "The council rejected the cycling lanes.",
            "The vote was nine to five.",
            "Work will start in June.",
            "The lanes will cost about 4.2 million euros.",
            "The council did not approve the cycling lanes.",
        ],
    },
    {
        "context": "Honeybees communicate the location of food with a waggle dance. The angle of the dance "
        "shows the direction of the flowers, and its length shows their distance.",
        "supported": [
            "Honeybees use a waggle dance to show where food is.",
            "The length of the dance tells other bees how far away the flowers are.",
            "The direction of the food is given by the angle of the dance.",
        ],
        "contradicted": [
            "The angle of the dance shows the distance of the flowers.",
            "Honeybees communicate the location of food with sounds.",
            "Bumblebees communicate the location of food with a waggle dance.",
            "The length of the dance does not show the distance.",
        ],
    },
    {
        "context": "Nordwind Logistics employs 1,200 people and has its headquarters in Hamburg. "
        "In 2022 its profit rose by 8 percent to 64 million euros.",
        "supported": [
            "Nordwind Logistics is based in Hamburg.",
            "The company has 1,200 employees.",
            "Nordwind's profit increased in 2022.",
            "Nordwind earned a profit of 64 million euros in 2022.",
        ],
        "contradicted": [
            "Nordwind Logistics has its headquarters in Bremen.",
            "The company employs 2,100 people.",
            "Nordwind's profit fell in 2022.",
            "In 2022 its profit rose by 18 percent.",
            "Maybe Nordwind has its headquarters in Munich.",
        ],
    },
    {
        "context": "Penicillin was discovered by Alexander Fleming in 1928 at St Mary's Hospital in London. "
        "It was not produced in large amounts until the 1940s.",
        "supported": [
            "Alexander Fleming discovered penicillin.",
            "Penicillin was discovered in 1928.",
            "Mass production of penicillin began only in the 1940s.",
            "Fleming made the discovery in London.",
        ],
        "contradicted": [
            "Louis Pasteur discovered penicillin.",
            "Penicillin was discovered in 1938.",
            "Penicillin was produced in large amounts in the 1920s.",
            "Fleming discovered penicillin in Paris.",
        ],
    },
    {
        "context": "The Trans-Siberian Railway connects Moscow with Vladivostok. The line is about "
        "9,300 kilometres long, and the journey takes seven days.",
        "supported": [
            "The Trans-Siberian Railway links Moscow and Vladivostok.",
            "The trip on the line lasts a week.",
            "The railway is roughly 9,300 kilometres long.",
        ],
        "contradicted": [
            "The Trans-Siberian Railway connects Moscow with Beijing.",
            "The journey takes three days.",
            "The line is about 3,900 kilometres long.",
            "The railway is shorter than 1,000 kilometres.",
        ],
    },
    {
        "context": "Olive trees grow slowly and can live for more than a thousand years. They need hot, "
        "dry summers and do not survive long periods of frost.",
        "supported": [
            "Olive trees can live for over a thousand years.",
            "Olive trees grow slowly.",
            "Long frosts kill olive trees.",
            "Olive trees need dry summers.",
        ],
        "contradicted": [
            "Olive trees grow quickly.",
            "Olive trees need cold, wet summers.",
            "Olive trees survive long periods of frost.",
            "Olive trees rarely live longer than fifty years.",
        ],
    },
    {
        "context": "The final was played in Lisbon. Porto beat Benfica 2-1 after extra time, with "
        "both goals scored by Diego Costa.",
        "supported": [
            "Porto won the final.",
            "Diego Costa scored twice for Porto.",
            "The final was decided in extra time.",
            "Benfica lost the final 2-1.",
        ],
        "contradicted": [
            "Benfica won the final.",
            "The final was played in Madrid.",
            "Porto beat Benfica 3-1.",
            "Both goals were scored by Luis Silva.",
            "I think Benfica won the final.",
        ],
    },
    {
        "context": "Copper conducts electricity well and is widely used in electrical wiring. "
        "It is softer than iron and turns green when it weathers.",
        "supported": [
            "Copper is a good conductor of electricity.",
            "Copper is used for electrical wires.",
            "Iron is harder than copper.",
            "Weathered copper becomes green.",
        ],
        "contradicted": [
            "Copper is harder than iron.",
            "Copper conducts electricity badly.",
            "Copper turns black when it weathers.",
            "Copper is rarely used in electrical wiring.",
        ],
    },
    {
        "context": "The museum opens at 9 a.m. from Tuesday to Sunday and is closed on Mondays. "
        "Entry is free for children under 12.",
        "supported": [
            "The museum is closed on Mondays.",
            "Children under 12 do not pay to enter.",
            "The museum opens at 9 a.m.",
        ],
        "contradicted": [
            "The museum is open on Mondays.",
            "The museum opens at 10 a.m.",
            "Entry is free for children under 16.",
            "Children under 12 must pay for entry.",
        ],
    },
    {
        "context": "Ada Lovelace worked with Charles Babbage on his Analytical Engine. Her notes of 1843 "
        "include what is often called the first computer program.",
        "supported": [
            "Ada Lovelace worked with Charles Babbage.",
            "Lovelace wrote her notes in 1843.",
            "Her notes contain what is often seen as the first computer program.",
        ],
        "contradicted": [
            "Ada Lovelace worked with Alan Turing on the Analytical Engine.",
            "Her notes date from 1853.",
            "Charles Babbage wrote the first computer program.",
        ],
    },
    {
        "context": "Lake Baikal in Siberia is the deepest lake in the world, with a maximum depth of "
        "1,642 metres. It holds about a fifth of the world's unfrozen fresh water.",
        "supported": [
            "No lake in the world is deeper than Lake Baikal.",
            "Lake Baikal is in Siberia.",
            "Lake Baikal is 1,642 metres deep at its deepest point.",
            "About 20 percent of the world's unfrozen fresh water is in Lake Baikal.",
        ],
        "contradicted": [
            "Lake Baikal is the shallowest lake in the world.",
            "Lake Baikal has a maximum depth of 642 metres.",
            "Lake Baikal holds about half of the world's fresh water.",
            "Lake Baikal is in Mongolia.",
        ],
    },
    {
        "context": "The vaccine trial enrolled 3,000 adults. Participants who received the vaccine had "
        "60 percent fewer infections than those who received a placebo.",
        "supported": [
            "The trial included 3,000 adults.",
            "The vaccine reduced infections by 60 percent compared with the placebo.",
            "People given the vaccine were infected less often.",
        ],
        "contradicted": [
            "The trial enrolled 300 adults.",
            "Participants who received the vaccine had more infections.",
            "The vaccine reduced infections by 90 percent.",
            "The trial enrolled 3,000 children.",
        ],
    },
    {
        "context": "Rainforests cover about 6 percent of the Earth's land. They are home to more than "
        "half of all plant and animal species.",
        "supported": [
            "Rainforests cover roughly 6 percent of the land on Earth.",
            "Most plant and animal species live in rainforests.",
        ],
        "contradicted": [
            "Rainforests cover about 16 percent of the Earth's land.",
            "Rainforests are home to fewer than a tenth of all species.",
            "Deserts are home to more than half of all species.",
        ],
    },
    {
        "context": "The novel was published in 1962 and tells the story of a family of farmers in Ohio. "
        "It won the Pulitzer Prize the following year.",
        "supported": [
            "The novel came out in 1962.",
            "The book won the Pulitzer Prize in 1963.",
            "The novel is about a farming family in Ohio.",
        ],
        "contradicted": [
            "The novel was published in 1952.",
            "The novel tells the story of a family of fishermen in Maine.",
            "The novel never won the Pulitzer Prize.",
            "It won the Pulitzer Prize in 1970.",
        ],
    },
    {
        "context": "Train tickets went up by 5 percent in January. Season tickets, however, stayed at "
        "last year's prices.",
        "supported": [
            "Train ticket prices rose in January.",
            "Season ticket prices did not change.",
            "Tickets became 5 percent more expensive in January.",
        ],
        "contradicted": [
            "Train tickets went down in January.",
            "Season tickets also became more expensive.",
            "Train tickets went up by 15 percent.",
            "Train tickets went up in July.",
        ],
    },
    {
        "context": "Venus is the hottest planet in the solar system, although Mercury is closer to the "
        "Sun. Its thick atmosphere traps heat.",
        "supported": [
            "Venus is hotter than Mercury.",
            "Mercury is nearer to the Sun than Venus.",
            "The atmosphere of Venus is thick and traps heat.",
        ],
        "contradicted": [
            "Mercury is the hottest planet in the solar system.",
            "Venus is closer to the Sun than Mercury.",
            "Venus has a thin atmosphere.",
            "Venus is the coldest planet in the solar system.",
        ],
    },
]

TEMPLATES_ZH: list[dict[str, object]] = [
    {
        "context": "西湖位于杭州市西部，面积约6.4平方公里，2011年被列入世界遗产名录。",
        "supported": ["西湖在杭州。", "西湖的面积约6.4平方公里。", "西湖于2011年成为世界遗产。", "我记得西湖在杭州。"],
        "contradicted": [
            "西湖位于南京市。",
            "西湖的面积约16平方公里。",
            "西湖于2001年被列入世界遗产名录。",
            "西湖没有被列入世界遗产名录。",
        ],
    },
    {
        "context": "这家餐厅每天上午十点开门，周一休息，招牌菜是红烧肉。",
        "supported": ["这家餐厅周一不营业。", "这家餐厅上午十点开门。", "红烧肉是这家餐厅的招牌菜。"],
        "contradicted": ["这家餐厅周一照常营业。", "这家餐厅上午八点开门。", "这家餐厅的招牌菜是麻婆豆腐。"],
    },
    {
        "context": "李华于2015年毕业于复旦大学，现在在上海一家银行工作。",
        "supported": ["李华毕业于复旦大学。", "李华在上海工作。", "李华2015年大学毕业。"],
        "contradicted": ["李华毕业于北京大学。", "李华在广州一家银行工作。", "李华于2018年毕业。", "我觉得李华在深圳工作。"],
    },
    {
        "context": "今年第一季度，该市的新车销量为3.2万辆，同比增长12%，其中电动车占四成。",
        "supported": ["该市第一季度卖出了3.2万辆新车。", "该市新车销量同比上升。", "电动车占新车销量的四成。"],
        "contradicted": ["该市第一季度的新车销量为5.6万辆。", "该市新车销量同比下降12%。", "电动车占新车销量的一成。"],
    },
    {
        "context": "黄山位于安徽省南部，最高峰莲花峰海拔1864米，以奇松、怪石、云海闻名。",
        "supported": ["黄山在安徽省。", "莲花峰是黄山的最高峰。", "黄山以云海闻名。", "莲花峰海拔1864米。"],
        "contradicted": ["黄山位于浙江省。", "莲花峰海拔2864米。", "黄山的最高峰是天都峰。", "黄山不以云海闻名。"],
    },
    {
        "context": "张衡是东汉时期的科学家，他发明了地动仪，用来测知地震的方向。",
        "supported": ["地动仪是张衡发明的。", "张衡生活在东汉时期。", "地动仪可以测知地震的方向。"],
        "contradicted": ["地动仪是祖冲之发明的。", "张衡是唐朝的科学家。", "张衡发明了指南针。", "可能是蔡伦发明了地动仪。"],
    },
    {
        "context": "这座图书馆藏书约50万册，周末开放到晚上九点，借书需要办理读者证。",
        "supported": ["这座图书馆约有50万册藏书。", "借书要先办读者证。", "图书馆周末开放到晚上九点。"],
        "contradicted": ["这座图书馆藏书约5万册。", "借书不需要读者证。", "图书馆周末开放到晚上六点。"],
    },
    {
        "context": "丹顶鹤每年秋天从东北飞到江苏盐城越冬，全世界野生丹顶鹤约有3000只。",
        "supported": ["丹顶鹤在盐城过冬。", "野生丹顶鹤大约有3000只。", "丹顶鹤秋天从东北飞往江苏。"],
        "contradicted": ["野生丹顶鹤约有8000只。", "丹顶鹤在海南越冬。", "丹顶鹤春天从江苏飞到东北越冬。"],
    },
]
