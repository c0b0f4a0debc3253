# ruff: noqa: RUF001 (messages in other scripts: their letters and punctuation are the point)
"""Messages for the masking rule (phoneuse_runtime/owner/privacy.py): real-world phrasings of one-time
codes, banks' and services' alike, in many languages, each with the code it must lose; and
ordinary messages with numbers that must come through unchanged."""

from __future__ import annotations

# (message, the code's digits as they appear)
CODE_MESSAGES: list[tuple[str, str]] = [
    # English
    ("Use 839201 to log in to Acme", "839201"),
    ("Your verification code is 482913. It expires in 10 minutes.", "482913"),
    ("G-582913 is your Google verification code.", "582913"),
    ("Your PIN: 4839 2214 5566", "4839 2214 5566"),
    ("Your OTP: 9876", "9876"),
    ("Chase: Your one-time code is 73 19 52. Don't share it. We'll never call to ask for it.", "73 19 52"),
    ("123-456 is your Instagram code. Don't share it.", "123-456"),
    ("WhatsApp code: 384-112. You can also tap on this link to verify your phone", "384-112"),
    ("Your Amazon OTP is 554311. Do not share it with anyone.", "554311"),
    ("Bank of Foo: 661 204 is your security code for a payment of $42.10 at Shop.", "661 204"),
    ("Sign in code for Microsoft account: 9401", "9401"),
    ("2FA token 772839", "772839"),
    ("Enter 3344 5566 to confirm your login", "3344 5566"),
    # Spanish
    ("Tu código de verificación es 493021", "493021"),
    ("BBVA: la clave para tu operación es 8812 3390. No la compartas.", "8812 3390"),
    ("901244 es tu código de Uber. No lo compartas con nadie.", "901244"),
    # Portuguese
    ("Seu código de verificação é 748392", "748392"),
    ("Nubank: use 662 018 para confirmar seu login. Não compartilhe.", "662 018"),
    ("Sua senha temporária é 5521", "5521"),
    # French
    ("Votre code de vérification est 551928", "551928"),
    ("Crédit Agricole : 448 921 est votre code de confirmation. Ne le communiquez pas.", "448 921"),
    ("Code d'authentification : 70-31-22", "70-31-22"),
    # German
    ("Ihr Bestätigungscode lautet 662018", "662018"),
    ("Sparkasse: Ihre mTAN für die Überweisung lautet 482 019", "482 019"),
    ("Ihr Sicherheitscode: 3902-1128. Geben Sie ihn niemandem weiter.", "3902-1128"),
    ("123987 ist Ihr Anmeldecode für Konto", "123987"),
    # Russian
    ("Ваш код: 662211", "662211"),
    ("Код подтверждения: 4821 03. Никому не сообщайте его.", "4821 03"),
    ("Сбербанк: 5930 — пароль для входа. Никому его не говорите.", "5930"),
    # Chinese
    ("【淘宝】您的验证码是382910，5分钟内有效，请勿泄露。", "382910"),
    ("您的登录验证码为 7731 08，请勿告诉他人", "7731 08"),
    ("動態密碼 620318，有效期 10 分鐘", "620318"),
    # Hindi
    ("आपका OTP 583920 है। इसे किसी के साथ साझा न करें।", "583920"),
    ("लॉगिन के लिए आपका कोड 4412 है", "4412"),
    ("839201 आपका सत्यापन कोड है", "839201"),
    # Japanese, Korean, Arabic
    ("認証コード：918273", "918273"),
    ("[Web발신] 인증번호 [482910]을 입력해주세요", "482910"),
    ("رمز التحقق الخاص بك هو 4829", "4829"),
]

# Messages that keep their numbers: times, prices, phone numbers, dates, quantities, and numbers
# beside words that name no secret (zip code, area code).
ORDINARY_MESSAGES: list[str] = [
    "Meet me at 10:30 at gate 24",
    "It costs $1,299.99 on sale, down from $1499",
    "Call me at +1 555 123 4567 when you land",
    "My new number is 555-123-4567",
    "The party is on 2026-12-24 at 19:00",
    "Flight LH 1234 departs 14:05 from terminal 2",
    "Room 4412, building B, 3rd floor",
    "I walked 10000 steps today!",
    "Lunch at 12:30 at 1200 Main St?",
    "Ваш заказ на 2500 рублей доставлен",
    "El precio es 1.500 € por persona",
    "Treffen um 18:30 Uhr am Hauptbahnhof, Gleis 12",
    "订单金额 1280 元，预计明天送达",
    "मेरा नंबर 98765 43210 है, कल फोन करना",
    "Le train de 8h15 arrive à 10h42, voie 7",
    "O jogo começa às 20:00, ingresso R$ 150",
    "The zip code is 94110 and the area code is 415",
    "Battery at 85%, 2048 MB free",
    "Pick up 2 pizzas for 6 people, order number 73021",
]
