// want: @allowed holds EP4, which Azure does not offer
@allowed([
  'EP1'
  'EP4'
])
param elasticPremiumSku string = 'EP1'
