/* builtin_text_banks.c — the banks of sentence patterns the writers share (data).
 * Part of builtin_text.c (which see). */
#include "gen/builtin_text_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------------ shared banks */

const char *const B_OPEN[] = {
    "{Few topics|Not many subjects} {spark as much curiosity|come up as often} as $t.",
    "If you have ever wondered about $t, you are {not alone|in good company}.",
    "$t is {easy to overlook|often misunderstood}, yet it {matters more than most people "
    "think|shapes more of our days than we notice}.",
    "{Lately|These days|Over the past few years}, $t has {become hard to ignore|moved to the "
    "center of the conversation}.",
    "What does it {really take|actually mean} to get $t right?",
    "Ask ten people about $t and you {will|may well} hear ten different answers.",
    "{Everyone|Almost everyone} {has an opinion on|talks about} $t, but {few|not many} {look "
    "closely at how it works|take the time to understand it}.",
};

const char *const B_BODY[] = {
    "At its core, $t is about {making deliberate choices|understanding what really "
    "matters|paying attention to the details}.",
    "A good place to start is $n, because that {shapes everything that follows|sets the tone "
    "for the rest}.",
    "{Many|Plenty of} people {underestimate|overlook} $n, but {that is often what makes the "
    "biggest difference|that is where small changes pay off}.",
    "When it comes to $t, {consistency beats intensity|small steps add up quickly|clarity "
    "beats complexity}.",
    "It also helps to {think about|keep an eye on} $n {from the very beginning|early on}.",
    "{Experience shows|It turns out} that $n and $n {work best together|are closely "
    "connected}.",
    "The details {matter|count}: $n can {turn a decent result into a great one|make or break "
    "the outcome}.",
    "{There is no single right way to approach $t|No one approach to $t fits everyone}, "
    "{but|yet} the {basics|fundamentals} {stay the same|rarely change}.",
    "{Start small|Begin with one change}, {measure what happens|see what works}, and {build "
    "from there|adjust as you go}.",
    "{Keep in mind|Remember} that {progress with $n takes time|getting $n right is a skill "
    "that grows with practice}.",
    "{Done well|Handled with care}, $t {pays off in ways that are easy to see|brings benefits "
    "that last}.",
    "{The good news|What is encouraging} is that {anyone|you} can {get better at|make "
    "progress with} $t, one step at a time.",
};

const char *const B_CLOSE[] = {
    "{In the end|Ultimately}, $t {rewards|favours} {patience and curiosity|those who keep "
    "learning}.",
    "{Whatever your starting point|Wherever you are today}, {real progress|a better result} "
    "with $t is {closer than it looks|within reach}.",
    "{Give it a try|Start today}, and {see|notice} how $t {fits into your own "
    "routine|changes the way you work}.",
    "The best time to {take $t seriously|look closer at $t} is {now|today}.",
    "{Keep these ideas in mind|Hold on to these basics}, and $t will {feel far less "
    "daunting|start to make sense}.",
};

/* Sentences about the current section's phrase $s. */
const char *const B_SECT[] = {
    "{In practice|Day to day}, questions about $s {come up early|are never far from the "
    "conversation}.",
    "It pays to give $s {more attention than most people do|a closer look}.",
    "{The key|One key idea} is to treat $s as {part of the whole picture|a habit rather than "
    "a one-off task}.",
    "{A simple way to begin|One easy first step} is to {look at how you handle $s "
    "today|write down what you want from $s}.",
    "{Small|Modest} improvements in $s {tend to compound|add up over time}.",
    "{It is tempting to|Many people} {rush past|skip over} $s, {but that usually "
    "backfires|yet that is often where the real gains are}.",
    "{Ask yourself|Consider} what success with $s would look like {a month from now|in "
    "practice}, and work backwards.",
    "{Examples help|Concrete examples make this clearer}: {see how others approach "
    "$s|notice the part $s plays in everyday situations}.",
};

const char *const B_PROMISE[] = {
    "In this post, {we will look at|you will learn} {what matters most about|how to "
    "approach} $t, {from $n to $n|step by step}.",
    "{Below|In the next few minutes}, {we break down|you will find} {the essentials of|a "
    "practical guide to} $t.",
    "{Let's|We'll} {dig into|unpack} $t {together|one step at a time} and {see what really "
    "works|separate the useful from the noise}.",
    "{By the end|Once you finish reading}, you will {know exactly how to approach|have a "
    "clear plan for} $t.",
};

const char *const B_TITLE[] = {
    "$T: A {Practical|Complete|Beginner's|Straightforward} Guide",
    "Everything You Need to Know About $T",
    "How to Get Started with $T",
    "Why $T Matters More Than Ever",
    "The {Simple|Honest|Surprising} Truth About $T",
    "$T, Explained",
    "What Nobody Tells You About $T",
    "$T Made {Simple|Easy}",
    "A Fresh Look at $T",
    "The {Real|Hidden} Benefits of $T",
    "{Common|Costly} Mistakes to Avoid with $T",
    "Is $T Worth It? {An Honest Look|What to Consider First}",
    "$T for $A: {Where to Begin|What to Know First}",
    "{Getting|Doing} $T Right: {Lessons|Ideas} That Work",
};

const char *const B_HEAD[] = {
    "$T, {Finally Made Simple|Reimagined|Done Right}",
    "{Discover|Experience|Meet} the {Smarter|Simpler|Better} Side of $T",
    "Everything You Love About $T, None of the Hassle",
    "$T That Actually {Works|Delivers}",
    "Your {Shortcut|Fast Track} to Better $T",
    "Make $T Your {Advantage|Superpower}",
    "The Future of $T Starts {Here|Today}",
    "$T for $A Who Want More",
    "Rethink $T. {Start Today|Start Small|Start Here}.",
    "{Less Effort|Less Guesswork}, Better $T",
    "Why {Everyone|Smart Teams|So Many People} Are Talking About $T",
};

const char *const B_SUBHEAD[] = {
    "The Case for $S",
    "Getting Started with $S",
    "The Role of $S",
    "{Common|Frequent} Mistakes with $S",
    "What to Know About $S",
    "Making the Most of $S",
    "$S in Practice",
    "A Closer Look at $S",
};

const char *const B_MKT[] = {
    "{Say goodbye to|Forget} {the hassle|the guesswork|wasted time} and {enjoy|say hello to} "
    "{better|smarter} $t.",
    "{Designed with $n in mind|Built with $n at heart}, it {removes the guesswork|keeps "
    "things simple|fits right into your day}.",
    "{Enjoy|Get} $n without the {usual hassle|complexity|extra cost}.",
    "{Made|Created} for $a who {expect more|care about quality|value their time}.",
    "It is the {simple|reliable} choice for $n{, every single day|}.",
    "{Whether you are new to $t or an old hand|Beginner or expert}, {it adapts to you|you "
    "will feel right at home}.",
    "{Quality you can feel|Results you can see}, {from $n to $n|in every detail}.",
};

const char *const B_CTA[] = {
    "{Get started|Try it} today{ — it only takes a minute|}.",
    "{Discover|Explore} $t {now|today} and see the difference.",
    "{Order|Book|Sign up} now{ and get started in minutes|}.",
    "{Join us|Come along} and {make $t part of your day|take $t further}.",
    "{Learn more|Find out more} about $t{ today|}.",
    "{Claim|Reserve} your spot {today|now} and start with $n.",
    "Start your first {project|step} with $t {today|now}.",
};

const char *const B_SUBLINE[] = {
    "{Discover|Find out} how $t can {save you time|simplify your day|help you do more with "
    "less}, without the {usual hassle|guesswork}.",
    "Everything you need for $t {in one place|under one roof}, so you can focus on what "
    "matters.",
    "{Built|Designed} for $a who want $t to {just work|be simple|feel effortless}.",
    "From $n to $n, {get|enjoy} {results you can see|real progress} {from day one|in less "
    "time}.",
    "Make $t {easier|clearer|more rewarding} with {practical guidance|tools} {that fit the "
    "way you work|that grow with you}.",
    "Spend less time {worrying about|figuring out} $n and more time {enjoying the "
    "results|doing what you love}.",
    "{A fresh|An honest}, {practical|down-to-earth} approach to $t that {respects your "
    "time|puts you first}.",
};
