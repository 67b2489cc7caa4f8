import array,random
a=array.array('d',[0.0])*(20_000_000)
idx=[random.randrange(len(a)) for _ in range(2_000_000)]
s=0.0
for i in idx: s+=a[i]
